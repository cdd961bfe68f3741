// make_draft OUT [--steps N]: trains the draft of chapter 13's speculative decoding: chapter 4's
// GPT on the same 2-digit addition as chapter 10's target (same vocabulary, same context), but
// with 1 layer instead of 2, d_model 32 instead of 64 and its own seed, so it is
// ~7x smaller (95% of sums right where the target gets ~all). The BUILD's genrule runs it: nothing
// is downloaded or committed.
#include <algorithm>
#include <iostream>
#include <string>

#include "chapters/01_gemm_cpu/sgemm.h"
#include "chapters/04_training_baseline/trainer.h"
#include "common/flags.h"
#include "common/main.h"

namespace {

int body(int argc, char** argv) {
  std::string out;
  std::int64_t steps = 1000;
  book::Flags flags("make_draft", "trains chapter 13's draft model and writes a checkpoint");
  flags.positional("out", &out, "where to write the checkpoint");
  flags.add("steps", &steps, "optimizer steps").range(10, 100000);
  flags.parse(argc, argv);

  book::gemm::set_sgemm_threads(1);  // the build runs it beside other actions
  book::train::TrainOptions options;
  options.model.n_layer = 1;
  options.model.n_head = 4;
  options.model.d_model = 32;
  options.digits = 2;
  options.micro_batch = 32;
  options.accumulation = 2;
  options.total_steps = steps;
  options.warmup_steps = std::max<std::int64_t>(10, steps / 20);
  options.seed = 1313;  // not the target's seed: the draft should be its own model
  book::train::Trainer trainer(options);
  for (std::int64_t s = 0; s < steps; ++s) trainer.step();
  const double accuracy = trainer.accuracy(500, book::train::Split::kValidation);
  trainer.save(out);
  std::cout << "make_draft: " << steps << " steps, validation accuracy " << accuracy * 100
            << "% on 500 sums, written to " << out << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return book::run_main(argc, argv, body); }
