// The stage's section "The OOM ladder on the real trainer": each remedy a switch of chapter 4's
// Trainer (trainer_remedies.h), switched on one after another, the tracker's peak against
// predict_remedies.
#include <iostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "chapters/04_training_baseline/data.h"
#include "chapters/09_memory_accounting/stage.h"
#include "chapters/09_memory_accounting/trainer_remedies.h"
#include "common/table.h"

namespace book::mem::stage {
namespace {

// The OOM ladder on chapter 4's real Trainer: each remedy a switch (trainer_remedies.h),
// applied cumulatively in the order an engineer tries them; the tracker's peak against
// predict_remedies, the host's bytes, the link's bytes per step and the loss after the steps.
struct RealRung {
  std::string name;
  train::TrainOptions options;
  Remedies remedies;
  RemedyMeasurement measured;
  RemedyPrediction predicted;
};

//! [real_ladder]
std::vector<RealRung> real_ladder(int digits, int steps) {
  train::TrainOptions o;
  o.precision = DType::kBF16;
  o.digits = digits;
  o.micro_batch = 32;
  Remedies r;
  std::vector<RealRung> rungs;
  const auto rung = [&](std::string name) {
    rungs.push_back({std::move(name), o, r, measure_remedies(o, r, steps), predict_remedies(o, r)});
  };
  rung("baseline: micro-batch 32");
  o.micro_batch = 8;
  o.accumulation = 4;
  rung("micro-batch 8 x 4 accumulation");
  r.recompute = Recomputation::kSelective;
  rung("+ selective recomputation");
  r.recompute = Recomputation::kFull;
  rung("+ full recomputation");
  r.offload = true;
  rung("+ optimizer state offloaded to host");
  r.adam_8bit = true;
  rung("+ 8-bit Adam states");
  r.tiled_attention = true;
  rung("+ tiled attention");
  return rungs;
}
//! [real_ladder]

Table real_ladder_table(const std::vector<RealRung>& rungs, bool* all_equal) {
  Table t({"remedy (cumulative)", "context", "device peak B", "predicted B", "equal",
           "activations B", "optimizer + master B", "host B", "moved B/step", "final loss",
           "ms/step"});
  for (const RealRung& r : rungs) {
    const std::size_t predicted = r.predicted.device.total();
    const bool equal = r.measured.device_peak == predicted;
    *all_equal = *all_equal && equal;
    const std::size_t moved = (r.measured.moved.to_host + r.measured.moved.to_device) /
                              static_cast<std::size_t>(r.measured.losses.size());
    t.add_row({r.name, std::to_string(train::AdditionTask(r.options.digits).model_context()),
               std::to_string(r.measured.device_peak), std::to_string(predicted),
               equal ? "yes" : "NO",
               std::to_string(r.measured.device[MemoryCategory::kActivations]),
               std::to_string(r.measured.device[MemoryCategory::kOptimizerStates] +
                              r.measured.device[MemoryCategory::kMasterWeights]),
               std::to_string(r.measured.host.total()), std::to_string(moved),
               fixed(r.measured.losses.back(), 4), fixed(1e3 * r.measured.seconds_per_step, 2)});
  }
  return t;
}

}  // namespace

TourLines real_ladder_section(const StageOptions& options) {
  const int steps = options.steps + 2;
  std::cerr << "memory: the OOM ladder on chapter 4's real trainer (7 rungs x 2 contexts) ...\n";
  bool real_equal = true;
  std::vector<RealRung> real = real_ladder(3, steps);
  const std::vector<RealRung> real_long = real_ladder(6, steps);
  real.insert(real.end(), real_long.begin(), real_long.end());
  const Table real_t = real_ladder_table(real, &real_equal);
  std::cout << "## The OOM ladder on the real trainer: chapter 4's Trainer, bf16, remedies "
               "switched on one after another ("
            << steps << " steps; ms/step is wall time on a shared machine, not a measurement)\n\n"
            << real_t.markdown() << "\n";
  const std::string dir = results_dir();
  real_t.write_csv(dir + "/ch09_real_ladder.csv");
  real_t.write_json(dir + "/ch09_real_ladder.json");

  std::ostringstream tour;
  tour << "tour: 09 | chapter 4's Trainer bf16 (context "
       << train::AdditionTask(real_long.front().options.digits).model_context()
       << "), remedies switched on cumulatively: baseline -> all six | "
       << real_long.front().measured.device_peak << " -> "
       << real_long.back().measured.device_peak
       << " B device peak, measured = predicted on every rung: " << (real_equal ? "yes" : "NO")
       << " | each remedy is a switch of the real trainer, its saving exact\n";
  return tour.str();
}

}  // namespace book::mem::stage
