#include "chapters/04_training_baseline/bench_layers.h"

#include <algorithm>
#include <map>
#include <memory>
#include <thread>

#include "chapters/01_gemm_cpu/sgemm.h"
#include "chapters/04_training_baseline/profile.h"
#include "common/table.h"
#include "common/timer.h"

namespace book::train {
namespace {

constexpr int kStepsPerRound = 20;
constexpr const char* kWholeStep = "whole step";
constexpr const char* kRest = "everything else (the step minus the layers above)";

// One round of kStepsPerRound steps: each layer's ms per step, plus the whole step's.
std::map<std::string, double> time_round(Trainer& trainer) {
  LayerProfile profile;
  Timer timer;
  for (int i = 0; i < kStepsPerRound; ++i) trainer.step();
  const double step_ms = timer.seconds() * 1e3 / kStepsPerRound;
  std::map<std::string, double> ms;
  double layers = 0;
  for (const auto& entry : profile.entries()) {
    ms[entry.name] = entry.seconds * 1e3 / kStepsPerRound;
    layers += ms[entry.name];
  }
  ms[kRest] = std::max(0.0, step_ms - layers);
  ms[kWholeStep] = step_ms;
  return ms;
}

}  // namespace

TrainOptions bench_options(int sequences) {
  TrainOptions o;  // the stage's model: 2 layers, d_model 64, 4 heads, 3-digit addition
  o.micro_batch = sequences;
  o.accumulation = 1;
  o.total_steps = 1000000;
  o.warmup_steps = 10;
  return o;
}

std::vector<int> bench_thread_counts() {
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (cores == 1) return {1};
  return {1, cores};
}

std::string layer_table_markdown(int sequences, int rounds) {
  const std::vector<int> counts = bench_thread_counts();
  // One trainer per thread count, warmed up, then rounds that alternate them: a change in the
  // machine's load hits both columns alike.
  std::vector<std::unique_ptr<Trainer>> trainers;
  for (int threads : counts) {
    const book::gemm::SgemmThreads scope(threads);
    trainers.push_back(std::make_unique<Trainer>(bench_options(sequences)));
    for (int i = 0; i < 3; ++i) trainers.back()->step();
  }
  std::vector<std::map<std::string, std::vector<double>>> samples(counts.size());
  for (int round = 0; round < rounds; ++round)
    for (std::size_t c = 0; c < counts.size(); ++c) {
      const book::gemm::SgemmThreads scope(counts[c]);
      for (const auto& [name, ms] : time_round(*trainers[c])) samples[c][name].push_back(ms);
    }

  const auto median_of = [&](std::size_t c, const std::string& name) {
    const auto it = samples[c].find(name);
    return it == samples[c].end() ? 0.0 : median(it->second);
  };
  std::vector<std::string> names;
  for (const auto& [name, values] : samples[0])
    if (name != kWholeStep && name != kRest) names.push_back(name);
  std::sort(names.begin(), names.end(), [&](const std::string& a, const std::string& b) {
    return median_of(0, a) > median_of(0, b);
  });
  names.push_back(kRest);
  names.push_back(kWholeStep);

  const double whole = median_of(0, kWholeStep);
  std::vector<std::string> header{"layer (" + std::to_string(sequences) + " sequences)",
                                  "1 thread ms/step", "share"};
  if (counts.size() > 1) {
    const std::string all = std::to_string(counts.back()) + " threads";
    header.push_back(all + " ms/step");
    header.push_back("speed-up");
  }
  Table table(header);
  for (const std::string& name : names) {
    const double one = median_of(0, name);
    std::vector<std::string> row{name, fixed(one, 3), fixed(100 * one / whole, 1) + "%"};
    if (counts.size() > 1) {
      const double all = median_of(counts.size() - 1, name);
      row.push_back(fixed(all, 3));
      row.push_back(all > 0 ? fixed(one / all, 2) + "x" : "-");
    }
    table.add_row(row);
  }
  return "Where the time goes: median of " + std::to_string(rounds) + " rounds of " +
         std::to_string(kStepsPerRound) +
         " steps per thread count, alternated (a layer's time includes the GEMMs it calls).\n\n" +
         table.markdown();
}

}  // namespace book::train
