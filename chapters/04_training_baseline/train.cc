// bazel run -c opt //chapters/04_training_baseline:train [-- --tour] [--steps N] [--digits D]
//     [--threads N] [--precision f32|bf16|f16]   (--help lists them)
//
// Trains the tiny GPT on multi-digit addition on the CPU, printing a progress line every few
// steps (loss, tokens/s, MFU against chapter 1's measured FP32 peak), then the validation loss
// and the task accuracy; writes a checkpoint and the loss curve (CSV + PNG). The steps of body()
// are the functions below, in order: parse, build the run, print its header, train, evaluate,
// write the results, print the memory and precision tables, print the tour lines.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <thread>

#include "chapters/01_gemm_cpu/peak.h"
#include "chapters/01_gemm_cpu/sgemm.h"
#include "chapters/04_training_baseline/mixed_precision_demo.h"
#include "chapters/04_training_baseline/train_stage.h"
#include "chapters/04_training_baseline/trainer.h"
#include "common/dtype.h"
#include "common/machine_load.h"
#include "common/main.h"
#include "common/table.h"
#include "common/timer.h"

namespace {

using namespace book::train;

using Args = StageArgs;  // the command line, parsed in train_stage.cc

std::string sig(double value, int digits = 3) {  // 3 significant digits: 2.49, 0.0871, 3.2e-05
  char text[32];
  std::snprintf(text, sizeof text, "%.*g", digits, value);
  return text;
}

// The stage's run: 2 layers, d_model 64, 4 heads; 2 micro-batches of 32; warm-up 5%, cosine.
TrainOptions stage_options(const Args& args) {
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
  return options;
}

// What the header, the progress lines and the summary share.
struct Run {
  Args args;
  TrainOptions options;
  int threads = 1;                  // sgemm's threads, resolved
  double peak_before = 0;           // GFLOP/s, chapter 1's FMA measurement before training
  double flops_per_token = 0;       // 6N + 12·L·C·T
  std::int64_t limit = 1;           // 10^digits
  std::int64_t ex_a = 0, ex_b = 0;  // the example sum, 123 + 456 scaled to the digits
};

Run describe(const Args& args, const Trainer& trainer) {
  Run run{args, trainer.options()};
  for (int i = 0; i < args.digits; ++i) run.limit *= 10;
  run.ex_a = 123456 / (1000000 / run.limit);
  run.ex_b = 456789 / (1000000 / run.limit);
  run.threads = book::gemm::sgemm_threads() ? book::gemm::sgemm_threads()
                                            : static_cast<int>(std::thread::hardware_concurrency());
  // Measured now and again after training; the larger is used, because on a shared machine a
  // measurement taken while another process runs comes out low (and would inflate the MFU).
  run.peak_before = book::gemm::measure_fp32_peak_gflops(run.threads);
  run.flops_per_token = run.options.model.training_flops_per_token(trainer.task().model_context());
  return run;
}

void print_header(const Run& run, const Trainer& trainer) {
  const Config& config = run.options.model;
  std::cout << "# Chapter 4: a tiny GPT trained on the CPU\n\n"
            << "model:      " << config.n_layer << " layers, d_model " << config.d_model << ", "
            << config.n_head << " heads, context " << config.context << ", vocab "
            << config.vocab_size << ": " << config.parameter_count()
            << " parameters (N = " << config.matmul_parameter_count() << " in matrix products)\n"
            << "task:       " << trainer.task().digits() << "-digit addition, e.g. "
            << AdditionTask::to_text(trainer.task().encode(run.ex_a, run.ex_b))
            << " (sum reversed)\n"
            << "step:       " << run.options.micro_batch << " sequences x "
            << run.options.accumulation << " micro-batches = " << trainer.tokens_per_step()
            << " tokens, " << book::dtype_name(run.options.precision) << ", AdamW, warm-up "
            << run.options.warmup_steps << " + cosine to step " << run.args.steps << "\n"
            << "FLOPs:      6N + 12·L·C·T = " << book::fixed(run.flops_per_token / 1e6, 3)
            << " MFLOP per token\n"
            << "peak:       " << book::fixed(run.peak_before, 1) << " GFLOP/s FP32 on "
            << run.threads
            << " threads (chapter 1's FMA measurement; measured again at the end)\n\n";
}

// The training loop's record: a curve row per step, a progress row every steps/20.
struct Training {
  float initial_val = 0;
  book::Table curve{{"step", "train_loss", "val_loss", "lr", "grad_norm"}};
  book::Table progress{{"step", "loss", "val loss", "lr", "grad norm", "tokens/s", "MFU"}};
  double seconds = 0;
  std::int64_t skipped = 0;
};

Training train(const Run& run, Trainer& trainer) {
  Training t;
  t.initial_val = trainer.validation_loss(8);
  // The curve has a row per step (validation loss only where it was measured: NaN elsewhere,
  // which gnuplot skips), so the first fall and every spike are visible.
  t.curve.add_row({"0", "NaN", sig(t.initial_val, 6), "0", "NaN"});
  const std::int64_t every = std::max<std::int64_t>(1, run.args.steps / 20);
  book::Timer total, window;
  std::int64_t window_steps = 0;
  for (std::int64_t s = 1; s <= run.args.steps; ++s) {
    const StepResult r = trainer.step();
    t.skipped += r.skipped;
    ++window_steps;
    std::string val_cell = "NaN";
    if (s % every == 0 || s == run.args.steps) {
      const double tokens_per_s = window_steps * trainer.tokens_per_step() / window.seconds();
      const double mfu = tokens_per_s * run.flops_per_token / (run.peak_before * 1e9);
      const float val = trainer.validation_loss(4);
      val_cell = sig(val, 6);
      std::printf("step %5lld | loss %.4f | val %.4f | lr %.2e | %8.0f tokens/s | MFU %5.1f%%\n",
                  static_cast<long long>(s), r.loss, val, r.lr, tokens_per_s, 100 * mfu);
      t.progress.add_row({std::to_string(s), book::fixed(r.loss, 4), book::fixed(val, 4),
                          book::fixed(r.lr, 6), book::fixed(r.grad_norm, 3),
                          book::fixed(tokens_per_s, 0), book::fixed(100 * mfu, 1) + "%"});
      window.reset();
      window_steps = 0;
    }
    t.curve.add_row(
        {std::to_string(s), sig(r.loss, 6), val_cell, sig(r.lr, 6), sig(r.grad_norm, 6)});
  }
  t.seconds = total.seconds();
  return t;
}

constexpr int kAccuracyExamples = 1000;  // sums decoded per accuracy measurement

struct Evaluation {
  double peak = 0, tokens_per_s = 0, mfu = 0;
  float final_val = 0;
  double val_accuracy = 0, train_accuracy = 0;
  double chance = 0;  // 10^-(digits+1): a uniform guess of every digit of the sum
};

Evaluation evaluate(const Run& run, const Training& t, Trainer& trainer) {
  Evaluation e;
  const double peak_after = book::gemm::measure_fp32_peak_gflops(run.threads);
  e.peak = std::max(run.peak_before, peak_after);
  e.tokens_per_s = run.args.steps * trainer.tokens_per_step() / t.seconds;
  e.mfu = e.tokens_per_s * run.flops_per_token / (e.peak * 1e9);
  e.final_val = trainer.validation_loss(16);
  e.val_accuracy = trainer.accuracy(kAccuracyExamples, Split::kValidation);
  e.train_accuracy = trainer.accuracy(kAccuracyExamples, Split::kTrain);
  e.chance = 1.0 / (10.0 * static_cast<double>(run.limit));
  std::cout << "\n"
            << t.progress.markdown() << "\n"
            << "trained:    " << run.args.steps << " steps in " << book::fixed(t.seconds, 1)
            << " s (incl. evaluation), " << book::fixed(e.tokens_per_s, 0) << " tokens/s, MFU "
            << book::fixed(100 * e.mfu, 1) << "%"
            << (t.skipped ? ", " + std::to_string(t.skipped) + " steps skipped by the loss scaler"
                          : "")
            << "\n"
            << "peak:       " << book::fixed(run.peak_before, 1) << " GFLOP/s before, "
            << book::fixed(peak_after, 1) << " after; MFU uses " << book::fixed(e.peak, 1)
            << " (the progress lines used the first)\n"
            << "val loss:   " << book::fixed(t.initial_val, 4)
            << " at init (ln 10 = 2.3026 is a uniform guess over digits) -> " << sig(e.final_val)
            << "\n"
            << "accuracy:   " << book::fixed(100 * e.val_accuracy, 1) << "% of "
            << kAccuracyExamples << " validation sums exactly right ("
            << book::fixed(100 * e.train_accuracy, 1) << "% on training pairs; chance is "
            << sig(100 * e.chance) << "%)\n"
            << "example:    " << run.ex_a << "+" << run.ex_b << " -> "
            << trainer.answer(run.ex_a, run.ex_b) << ", " << run.limit - 1 << "+1 -> "
            << trainer.answer(run.limit - 1, 1) << "\n";
  return e;
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

// The curve (CSV and PNG), a checkpoint and the summary (JSON) under results/.
void write_results(const std::string& dir, const Run& run, const Training& t, const Evaluation& e,
                   const Trainer& trainer) {
  t.curve.write_csv(dir + "/ch04_loss_curve.csv");
  std::cout << "curve:      " << dir << "/ch04_loss_curve.csv\n";
  plot(dir + "/ch04_loss_curve.csv", dir + "/ch04_loss_curve.png", run.args.digits);
  trainer.save(dir + "/ch04_checkpoint.bin");
  std::cout << "checkpoint: " << dir << "/ch04_checkpoint.bin\n";
  book::Table summary({"metric", "value"});
  summary.add_row({"precision", book::dtype_name(run.args.precision)});
  summary.add_row({"digits", std::to_string(run.args.digits)});
  summary.add_row({"steps", std::to_string(run.args.steps)});
  summary.add_row({"seconds", book::fixed(t.seconds, 1)});
  summary.add_row({"tokens_per_s", book::fixed(e.tokens_per_s, 0)});
  summary.add_row({"peak_gflops", book::fixed(e.peak, 1)});
  summary.add_row({"mfu", sig(e.mfu, 4)});
  summary.add_row({"val_loss_init", sig(t.initial_val, 6)});
  summary.add_row({"val_loss_final", sig(e.final_val, 6)});
  summary.add_row({"val_accuracy", sig(e.val_accuracy, 4)});
  summary.add_row({"steps_skipped", std::to_string(t.skipped)});
  summary.write_json(dir + "/ch04_summary.json");
  std::cout << "summary:    " << dir << "/ch04_summary.json\n\n";
}

// Returns the mixed-precision report, which the tour line quotes.
MemoryReport print_memory_and_precision(const Run& run, const Trainer& trainer) {
  std::cout << "## Memory of a training step (" << book::dtype_name(run.args.precision)
            << ", measured from the buffers)\n\n"
            << memory_table(trainer.memory()).markdown() << "\n";
  const MemoryReport mixed = mixed_precision_memory(run.options);
  std::cout
      << "## The same model in mixed precision (FP16 weights and grads, FP32 master + Adam)\n\n"
      << memory_table(mixed).markdown() << "\n";
  std::cout << "## FP16 overflow and underflow, and what cures them\n\n"
            << precision_demo_table().markdown() << "\n";
  return mixed;
}

// What the tour ran, next to the chapter's default run: the tour trains a smaller task, so its
// model has another parameter count (the position embedding follows the context length).
std::int64_t parameters_of(const Args& args) {
  Config model = stage_options(args).model;  // the shape the Trainer gives it for this task
  model.vocab_size = AdditionTask::vocab_size();
  model.context = AdditionTask(args.digits).model_context();
  return model.parameter_count();
}

void print_tour_config(const Args& args) {
  const Args chapter_default;
  std::cout << "tour-config: 04 | train --tour: " << args.digits << "-digit addition, "
            << args.steps << " steps, " << book::dtype_name(args.precision) << ", "
            << parameters_of(args)
            << " parameters (the chapter's default run, `train` without --tour: "
            << chapter_default.digits << "-digit addition, " << chapter_default.steps << " steps, "
            << parameters_of(chapter_default) << " parameters)\n";
}

void print_tour(const Run& run, const Training& t, const Evaluation& e, const MemoryReport& mixed) {
  std::cout << "tour: 04 | val loss of the tiny GPT, " << run.args.steps << " steps ("
            << book::fixed(t.seconds, 0) << " s) | " << book::fixed(t.initial_val, 2) << " -> "
            << sig(e.final_val) << " nats | "
            << loss_verdict(t.initial_val, e.final_val, run.args.steps) << "\n"
            << "tour: 04 | exact-sum accuracy, " << run.args.digits << "-digit addition, "
            << kAccuracyExamples << " held-out sums | " << book::fixed(100 * e.val_accuracy, 1)
            << "% | "
            << accuracy_verdict(e.val_accuracy, e.chance, kAccuracyExamples, run.args.steps) << "\n"
            << "tour: 04 | model state per parameter, mixed-precision AdamW (" << mixed.parameters
            << " params) | " << book::fixed(mixed.state_bytes_per_parameter(), 2)
            << " B/param | ~16 bytes per parameter (2+2+4+4+4)\n"
            << "tour: 04 | training throughput, MFU vs measured FP32 peak | "
            << book::fixed(100 * e.mfu, 1) << "% (" << book::fixed(e.tokens_per_s, 0)
            << " tokens/s) | MFU = 6N+attn FLOPs x tokens/s / peak\n";
}

int body(int argc, char** argv) {
  const Args args = parse_stage_args(std::vector<std::string>(argv + 1, argv + argc));
  // Before the run, not after it: a results folder that cannot be written is found in a second.
  const std::string results = book::results_dir();
  book::print_machine_load();
  if (args.tour) print_tour_config(args);
  const book::gemm::SgemmThreads threads(args.threads);
  Trainer trainer(stage_options(args));
  const Run run = describe(args, trainer);
  print_header(run, trainer);
  const Training training = train(run, trainer);
  const Evaluation evaluation = evaluate(run, training, trainer);
  write_results(results, run, training, evaluation, trainer);
  const MemoryReport mixed = print_memory_and_precision(run, trainer);
  print_tour(run, training, evaluation, mixed);
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return book::run_main(argc, argv, body); }
