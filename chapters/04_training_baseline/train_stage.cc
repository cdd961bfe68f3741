#include "chapters/04_training_baseline/train_stage.h"

#include <cmath>
#include <cstdio>

#include "common/flags.h"

namespace book::train {

StageArgs parse_stage_args(const std::vector<std::string>& arguments) {
  StageArgs args;
  std::string precision = "f32";
  Flags flags("train", "trains the tiny GPT on multi-digit addition on the CPU");
  flags.add("tour", &args.tour, "the tour's quick run: 2-digit addition in 800 steps");
  flags.add("steps", &args.steps, "optimizer steps (the schedule's length)").range(10, 100000000);
  flags.add("digits", &args.digits, "digits per operand of the addition task").range(1, 6);
  flags.add("threads", &args.threads, "sgemm's threads (0: all hardware threads)").range(0, 4096);
  flags.add("precision", &precision, "storage of weights and gradients")
      .choices({"f32", "bf16", "f16", "fp32", "fp16"});
  std::vector<const char*> argv{"train"};
  for (const std::string& argument : arguments) argv.push_back(argument.c_str());
  flags.parse(static_cast<int>(argv.size()), argv.data());
  if (args.tour) {  // 2-digit addition learns in a few hundred steps
    if (!flags.was_set("steps")) args.steps = 800;
    if (!flags.was_set("digits")) args.digits = 2;
  }
  args.precision = parse_dtype(precision);
  return args;
}

bool well_above_chance(double accuracy, double chance, int examples) {
  return accuracy >= 10 * chance && accuracy * examples >= 10;
}

bool loss_fell(double initial, double final) {
  return std::isfinite(initial) && std::isfinite(final) && final <= 0.9 * initial;
}

namespace {

std::string percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g%%", 100 * fraction);
  return text;
}

}  // namespace

std::string accuracy_verdict(double accuracy, double chance, int examples, std::int64_t steps) {
  if (well_above_chance(accuracy, chance, examples))
    return "well above chance (" + percent(chance) + ")";
  return "not above chance (" + percent(chance) + ") after " + std::to_string(steps) +
         " steps: train longer (--steps 3000)";
}

std::string loss_verdict(double initial, double final, std::int64_t steps) {
  if (loss_fell(initial, final)) return "the loss falls: the model learns";
  return "the loss did not fall after " + std::to_string(steps) +
         " steps: train longer (--steps 3000)";
}

}  // namespace book::train
