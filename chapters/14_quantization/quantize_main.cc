// The chapter's stage: `quantize [--tour]` prints, one README section after another, what each
// quantisation scheme costs and loses (stage.h lists the sections). Tables go to stdout and to
// results/ch14_*.csv, pictures to results/ch14_*.png.
#include <iostream>

#include "chapters/14_quantization/stage.h"
#include "common/flags.h"
#include "common/machine_load.h"
#include "common/main.h"

namespace {

using namespace book::quant::stage;

int body(int argc, char** argv) {
  StageOptions options;
  options.argv0 = argv[0];
  book::Flags flags("quantize",
                    "quantisation schemes, kernels, outliers, accuracy and the INT8 KV cache");
  flags.add("tour", &options.tour, "the tour's quick run (smaller matrices, fewer problems)");
  flags.add("checkpoint", &options.checkpoint,
            "chapter 4's trained addition checkpoint (default: the one Bazel trains)");
  flags.add("threads", &options.threads, "threads for the kernels and the sweeps").range(1, 256);
  flags.parse(argc, argv);
  book::print_machine_load();
  schemes_section(options);
  model_section(options);
  kv_section(options);
  decode_section(options);
  if (options.tour)
    std::cout << "tour-config: 14 | quantize --tour: 256² random matrix (the full run: 1024²)\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return book::run_main(argc, argv, body); }
