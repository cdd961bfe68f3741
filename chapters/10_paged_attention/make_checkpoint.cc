// make_checkpoint OUT [--steps N] [--layers L --width D --seed S]: trains chapter 4's GPT on
// 2-digit addition with the settings of chapter 4's tour run (by default 2 layers, d_model 64,
// 4 heads, 2 micro-batches of 32, warm-up 5% then cosine) and writes the checkpoint to OUT. The
// BUILD's genrules run it, so chapter 10's tests and stage serve a trained model whose answers can
// be graded, with nothing downloaded or committed; chapter 13 trains its smaller draft model with
// it too (1 layer, width 32, its own seed: same vocabulary and context as the target).
#include <algorithm>
#include <cstdint>
#include <iostream>
#include <string>

#include "chapters/01_gemm_cpu/sgemm.h"
#include "chapters/04_training_baseline/trainer.h"
#include "common/flags.h"
#include "common/main.h"

namespace {

int body(int argc, char** argv) {
  std::string out;
  std::int64_t steps = 800;
  book::Flags flags("make_checkpoint", "trains chapter 4's addition model and writes a checkpoint");
  flags.positional("out", &out, "where to write the checkpoint");
  book::train::TrainOptions options;
  int layers = 2, width = 64;
  std::int64_t seed = static_cast<std::int64_t>(options.seed);
  flags.add("steps", &steps, "optimizer steps").range(10, 100000);
  flags.add("layers", &layers, "transformer blocks").range(1, 64);
  flags.add("width", &width, "d_model (a multiple of the 4 heads)").range(4, 4096);
  flags.add("seed", &seed, "the initial weights' seed").range(0, INT64_MAX);
  flags.parse(argc, argv);
  if (width % 4 != 0)
    throw book::UsageError("--width must be a multiple of the 4 heads, got " +
                           std::to_string(width));

  // One thread: the build runs this next to other actions, where spinning GEMM threads would
  // only wait for each other. The result is the same bits at any thread count.
  const book::gemm::SgemmThreads one_thread(1);
  options.model.n_layer = layers;
  options.model.n_head = 4;
  options.model.d_model = width;
  options.seed = static_cast<std::uint64_t>(seed);
  options.digits = 2;
  options.micro_batch = 32;
  options.accumulation = 2;
  options.total_steps = steps;
  options.warmup_steps = std::max<std::int64_t>(10, steps / 20);
  book::train::Trainer trainer(options);
  for (std::int64_t s = 0; s < steps; ++s) trainer.step();
  const double accuracy = trainer.accuracy(500, book::train::Split::kValidation);
  trainer.save(out);
  std::cout << "make_checkpoint: " << steps << " steps, validation accuracy " << accuracy * 100
            << "% on 500 sums, written to " << out << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return book::run_main(argc, argv, body); }
