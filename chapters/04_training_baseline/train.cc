// bazel run -c opt //chapters/04_training_baseline:train [-- --tour] [--steps N] [--digits D]
//     [--threads N] [--precision fp32|bf16|fp16]
//
// Trains the tiny GPT on 3-digit addition for a few minutes on the CPU, printing a progress line
// every few steps (loss, tokens/s, MFU against chapter 1's measured FP32 peak), then the
// validation loss and the task accuracy; writes a checkpoint and the loss curve (CSV + PNG).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <thread>

#include "chapters/01_gemm_cpu/peak.h"
#include "chapters/01_gemm_cpu/sgemm.h"
#include "chapters/04_training_baseline/mixed_precision_demo.h"
#include "chapters/04_training_baseline/trainer.h"
#include "common/check.h"
#include "common/table.h"
#include "common/timer.h"

namespace {

using namespace book::train;

struct Args {
  bool tour = false;
  std::int64_t steps = 3000;
  int digits = 3;
  int threads = 0;  // sgemm's thread count; 0 = all hardware threads
  Precision precision = Precision::kFP32;
};

Args parse(int argc, char** argv) {
  Args args;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      BOOK_CHECK(i + 1 < argc, a << " needs a value");
      return argv[++i];
    };
    if (a == "--tour") {
      args.tour = true;  // about 30-60 s on 2 cores: 2-digit addition learns in a few hundred steps
      args.steps = 800;
      args.digits = 2;
    } else if (a == "--threads") {
      args.threads = std::stoi(value());
    } else if (a == "--digits") {
      args.digits = std::stoi(value());
    } else if (a == "--steps") {
      args.steps = std::stoll(value());
    } else if (a == "--precision") {
      const std::string p = value();
      BOOK_CHECK(p == "fp32" || p == "bf16" || p == "fp16",
                 "--precision must be fp32, bf16 or fp16, got " << p);
      args.precision = p == "fp32"   ? Precision::kFP32
                       : p == "bf16" ? Precision::kBF16
                                     : Precision::kFP16;
    } else {
      BOOK_CHECK(
          false,
          "unknown argument "
              << a
              << " (use --tour, --steps N, --digits D, --threads N, --precision fp32|bf16|fp16)");
    }
  }
  BOOK_CHECK(args.steps >= 10, "--steps must be >= 10, got " << args.steps);
  return args;
}

std::string sig(double value, int digits = 3) {  // 3 significant digits: 2.49, 0.0871, 3.2e-05
  char text[32];
  std::snprintf(text, sizeof text, "%.*g", digits, value);
  return text;
}

void plot(const std::string& csv, const std::string& png, int digits) {
  const std::string script =
      "set terminal pngcairo size 800,480; set output '" + png +
      "'; set datafile separator ','; set datafile missing 'NaN'; set key top right;"
      " set logscale y; set format y '%g';"
      " set xlabel 'optimizer step'; set ylabel 'cross-entropy (nats)';"
      " set title 'Tiny GPT on " +
      std::to_string(digits) + "-digit addition'; plot '" + csv +
      "' using 1:2 skip 1 with lines title 'train loss', '" + csv +
      "' using 1:3 skip 1 with linespoints pt 7 ps 0.6 title 'validation loss'";
  const std::string command = "gnuplot -e \"" + script + "\" 2>/dev/null";
  if (std::system(command.c_str()) == 0)
    std::cout << "plot:       " << png << "\n";
  else
    std::cout << "plot:       skipped (gnuplot not found; apt-get install gnuplot-nox)\n";
}

}  // namespace

int main(int argc, char** argv) try {
  const Args args = parse(argc, argv);
  book::gemm::set_sgemm_threads(args.threads);
  TrainOptions options;
  options.model.n_layer = 2;
  options.model.n_head = 4;
  options.model.d_model = 64;
  options.digits = args.digits;
  options.micro_batch = 32;
  options.accumulation = 2;
  options.total_steps = args.steps;
  options.warmup_steps = std::max<std::int64_t>(10, args.steps / 20);
  options.precision = args.precision;
  Trainer trainer(options);
  std::int64_t limit = 1;  // 10^digits
  for (int i = 0; i < args.digits; ++i) limit *= 10;
  const std::int64_t ex_a = 123456 / (1000000 / limit),
                     ex_b = 456789 / (1000000 / limit);  // 123+456
  const Config& config = trainer.options().model;
  const int threads = book::gemm::sgemm_threads()
                          ? book::gemm::sgemm_threads()
                          : static_cast<int>(std::thread::hardware_concurrency());
  // Measured now and again after training; the larger is used, because on a shared machine a
  // measurement taken while another process runs comes out low (and would inflate the MFU).
  const double peak_before = book::gemm::measure_fp32_peak_gflops(threads);
  double peak = peak_before;
  const double flops_per_token = config.training_flops_per_token(trainer.task().model_context());

  std::cout << "# Chapter 4: a tiny GPT trained on the CPU\n\n"
            << "model:      " << config.n_layer << " layers, d_model " << config.d_model << ", "
            << config.n_head << " heads, context " << config.context << ", vocab "
            << config.vocab_size << ": " << config.parameter_count()
            << " parameters (N = " << config.matmul_parameter_count() << " in matrix products)\n"
            << "task:       " << trainer.task().digits() << "-digit addition, e.g. "
            << AdditionTask::to_text(trainer.task().encode(ex_a, ex_b)) << " (sum reversed)\n"
            << "step:       " << options.micro_batch << " sequences x " << options.accumulation
            << " micro-batches = " << trainer.tokens_per_step() << " tokens, "
            << precision_name(args.precision) << ", AdamW, warm-up " << options.warmup_steps
            << " + cosine to step " << args.steps << "\n"
            << "FLOPs:      6N + 12·L·C·T = " << book::fixed(flops_per_token / 1e6, 3)
            << " MFLOP per token\n"
            << "peak:       " << book::fixed(peak_before, 1) << " GFLOP/s FP32 on " << threads
            << " threads (chapter 1's FMA measurement; measured again at the end)\n\n";

  const float initial_val = trainer.validation_loss(8);
  // The curve has a row per step (validation loss only where it was measured: NaN elsewhere,
  // which gnuplot skips), so the first fall and every spike are visible.
  book::Table curve({"step", "train_loss", "val_loss", "lr", "grad_norm"});
  curve.add_row({"0", "NaN", sig(initial_val, 6), "0", "NaN"});
  book::Table progress({"step", "loss", "val loss", "lr", "grad norm", "tokens/s", "MFU"});
  const std::int64_t every = std::max<std::int64_t>(1, args.steps / 20);
  book::Timer total, window;
  std::int64_t skipped = 0, window_steps = 0;
  for (std::int64_t s = 1; s <= args.steps; ++s) {
    const StepResult r = trainer.step();
    skipped += r.skipped;
    ++window_steps;
    std::string val_cell = "NaN";
    if (s % every == 0 || s == args.steps) {
      const double tokens_per_s = window_steps * trainer.tokens_per_step() / window.seconds();
      const double mfu = tokens_per_s * flops_per_token / (peak * 1e9);
      const float val = trainer.validation_loss(4);
      val_cell = sig(val, 6);
      std::printf("step %5lld | loss %.4f | val %.4f | lr %.2e | %8.0f tokens/s | MFU %5.1f%%\n",
                  static_cast<long long>(s), r.loss, val, r.lr, tokens_per_s, 100 * mfu);
      progress.add_row({std::to_string(s), book::fixed(r.loss, 4), book::fixed(val, 4),
                        book::fixed(r.lr, 6), book::fixed(r.grad_norm, 3),
                        book::fixed(tokens_per_s, 0), book::fixed(100 * mfu, 1) + "%"});
      window.reset();
      window_steps = 0;
    }
    curve.add_row({std::to_string(s), sig(r.loss, 6), val_cell, sig(r.lr, 6), sig(r.grad_norm, 6)});
  }
  const double seconds = total.seconds();
  const double peak_after = book::gemm::measure_fp32_peak_gflops(threads);
  peak = std::max(peak_before, peak_after);
  const double tokens_per_s = args.steps * trainer.tokens_per_step() / seconds;
  const double mfu = tokens_per_s * flops_per_token / (peak * 1e9);
  const float final_val = trainer.validation_loss(16);
  const double val_accuracy = trainer.accuracy(1000, Split::kValidation);
  const double train_accuracy = trainer.accuracy(1000, Split::kTrain);
  const std::string chance =
      sig(100.0 / (10.0 * static_cast<double>(limit))) + "%";  // 10^-(digits+1)

  std::cout << "\n"
            << progress.markdown() << "\n"
            << "trained:    " << args.steps << " steps in " << book::fixed(seconds, 1)
            << " s (incl. evaluation), " << book::fixed(tokens_per_s, 0) << " tokens/s, MFU "
            << book::fixed(100 * mfu, 1) << "%"
            << (skipped ? ", " + std::to_string(skipped) + " steps skipped by the loss scaler" : "")
            << "\n"
            << "peak:       " << book::fixed(peak_before, 1) << " GFLOP/s before, "
            << book::fixed(peak_after, 1) << " after; MFU uses " << book::fixed(peak, 1)
            << " (the progress lines used the first)\n"
            << "val loss:   " << book::fixed(initial_val, 4)
            << " at init (ln 10 = 2.3026 is a uniform guess over digits) -> " << sig(final_val)
            << "\n"
            << "accuracy:   " << book::fixed(100 * val_accuracy, 1)
            << "% of 1000 validation sums exactly right (" << book::fixed(100 * train_accuracy, 1)
            << "% on training pairs; chance is " << chance << ")\n"
            << "example:    " << ex_a << "+" << ex_b << " -> " << trainer.answer(ex_a, ex_b) << ", "
            << limit - 1 << "+1 -> " << trainer.answer(limit - 1, 1) << "\n";

  const MemoryReport memory = trainer.memory();
  const std::string dir = book::results_dir();
  curve.write_csv(dir + "/ch04_loss_curve.csv");
  std::cout << "curve:      " << dir << "/ch04_loss_curve.csv\n";
  plot(dir + "/ch04_loss_curve.csv", dir + "/ch04_loss_curve.png", args.digits);
  trainer.save(dir + "/ch04_checkpoint.bin");
  std::cout << "checkpoint: " << dir << "/ch04_checkpoint.bin\n";
  book::Table summary({"metric", "value"});
  summary.add_row({"precision", precision_name(args.precision)});
  summary.add_row({"digits", std::to_string(args.digits)});
  summary.add_row({"steps", std::to_string(args.steps)});
  summary.add_row({"seconds", book::fixed(seconds, 1)});
  summary.add_row({"tokens_per_s", book::fixed(tokens_per_s, 0)});
  summary.add_row({"peak_gflops", book::fixed(peak, 1)});
  summary.add_row({"mfu", sig(mfu, 4)});
  summary.add_row({"val_loss_init", sig(initial_val, 6)});
  summary.add_row({"val_loss_final", sig(final_val, 6)});
  summary.add_row({"val_accuracy", sig(val_accuracy, 4)});
  summary.add_row({"steps_skipped", std::to_string(skipped)});
  summary.write_json(dir + "/ch04_summary.json");
  std::cout << "summary:    " << dir << "/ch04_summary.json\n\n";

  std::cout << "## Memory of a training step (" << precision_name(args.precision)
            << ", measured from the buffers)\n\n"
            << memory_table(memory).markdown() << "\n";
  const MemoryReport mixed = mixed_precision_memory(options);
  std::cout
      << "## The same model in mixed precision (FP16 weights and grads, FP32 master + Adam)\n\n"
      << memory_table(mixed).markdown() << "\n";
  std::cout << "## FP16 overflow and underflow, and what cures them\n\n"
            << precision_demo_table().markdown() << "\n";

  std::cout << "tour: 04 | val loss of the tiny GPT, " << args.steps << " steps ("
            << book::fixed(seconds, 0) << " s) | " << book::fixed(initial_val, 2) << " -> "
            << sig(final_val) << " nats | the loss falls: the model learns\n"
            << "tour: 04 | exact-sum accuracy, " << args.digits
            << "-digit addition, 1000 held-out sums | " << book::fixed(100 * val_accuracy, 1)
            << "% | well above chance (" << chance << ")\n"
            << "tour: 04 | model state per parameter, mixed-precision AdamW (" << mixed.parameters
            << " params) | " << book::fixed(mixed.state_bytes_per_parameter(), 2)
            << " B/param | ~16 bytes per parameter (2+2+4+4+4)\n"
            << "tour: 04 | training throughput, MFU vs measured FP32 peak | "
            << book::fixed(100 * mfu, 1) << "% (" << book::fixed(tokens_per_s, 0)
            << " tokens/s) | MFU = 6N+attn FLOPs x tokens/s / peak\n";
  return 0;
} catch (const std::exception& error) {
  std::cerr << "train: " << error.what() << "\n";
  return 1;
}
