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
    std::cout << "tour-config: 14 | quantize --tour: a 256² random matrix; 100 held-out sums and 32 "
                 "calibration sequences, alpha in steps of 0.2; a 256-wide layer; 200 sums through "
                 "the engine; decode on a 1024-wide 2-layer model, 3 repetitions (the full run: "
                 "1024², 200 sums and 64 sequences, steps of 0.1, a 512-wide layer, 500 and 1000 "
                 "sums, 4 layers, 5 repetitions)\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return book::run_main(argc, argv, body); }
