// The ddp stage's ladder: every rung at every N, timed, counted, and held against chapter 4.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <mutex>

#include "chapters/01_gemm_cpu/sgemm.h"
#include "chapters/03_collectives/threads.h"
#include "chapters/04_training_baseline/trainer.h"
#include "chapters/05_data_parallel/ddp_trainer.h"
#include "chapters/05_data_parallel/stage.h"
#include "common/table.h"
#include "common/timer.h"

namespace book::ddp::stage {
namespace {

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// Chapter 4's losses for the run, computed once per stage run (they depend on neither N nor rung).
const std::vector<float>& one_device_losses(const StageOptions& options) {
  static std::map<std::string, std::vector<float>> cache;
  const DdpOptions d = run_options(options, Rung::kFlat);
  const std::string key = std::to_string(fingerprint(resolve(d, 1)));
  auto& losses = cache[key];
  if (losses.empty()) {
    train::Trainer trainer(d.train);
    for (int s = 0; s < options.warmup + options.steps; ++s) losses.push_back(trainer.step().loss);
  }
  return losses;
}

// What one rank measured over the timed steps.
struct RankMeasure {
  std::vector<StepTimes> times;
  std::vector<float> losses;  // every step, warm-up included
  std::size_t buckets = 0, parameters = 0;
  std::int64_t tokens_per_step = 0;
};

RankMeasure measure_rank(coll::Communicator& comm, const StageOptions& options, Rung rung) {
  DdpTrainer trainer(comm, run_options(options, rung));
  RankMeasure m;
  for (int s = 0; s < options.warmup + options.steps; ++s) {
    m.losses.push_back(trainer.step().loss);
    if (s >= options.warmup) m.times.push_back(trainer.last_times());
    trainer.verify_replicas();  // after every step: the replicas are bit-identical (throws if not)
  }
  m.buckets = trainer.buckets().size();
  m.parameters = trainer.model().layout().total();
  m.tokens_per_step = trainer.tokens_per_step();
  return m;
}

// What the other ranks contribute to a row: their bytes in the last step and their hidden share
// in every timed step.
struct OtherRanks {
  std::vector<double> bytes;                // [rank]
  std::vector<std::vector<double>> hidden;  // [rank][step]
};

OtherRanks others_of(const std::vector<RankMeasure>& ranks) {
  OtherRanks o;
  for (const RankMeasure& r : ranks) {
    o.bytes.push_back(static_cast<double>(r.times.back().gradient_bytes));
    o.hidden.emplace_back();
    for (const StepTimes& t : r.times) o.hidden.back().push_back(t.hidden_fraction());
  }
  return o;
}

LadderRow summarise(const StageOptions& options, Rung rung, int n, const RankMeasure& zero,
                    const OtherRanks& all) {
  LadderRow row;
  row.rung = rung;
  row.ranks = n;
  std::vector<double> step, busy, wait, hidden, compute, optimizer;
  for (std::size_t s = 0; s < zero.times.size(); ++s) {
    step.push_back(zero.times[s].step);
    compute.push_back(zero.times[s].forward + zero.times[s].backward);
    optimizer.push_back(zero.times[s].optimizer);
    busy.push_back(zero.times[s].comm_busy);
    wait.push_back(zero.times[s].comm_wait);
    double h = 0;
    for (const auto& rank : all.hidden) h += rank[s];
    hidden.push_back(h / static_cast<double>(all.hidden.size()));
  }
  row.step_ms = 1e3 * median_of(step);
  row.tokens_per_s = static_cast<double>(zero.tokens_per_step) / (row.step_ms / 1e3);
  row.compute_ms = 1e3 * median_of(compute);
  row.optimizer_ms = 1e3 * median_of(optimizer);
  row.comm_busy_ms = 1e3 * median_of(busy);
  row.comm_wait_ms = 1e3 * median_of(wait);
  row.hidden = median_of(hidden);
  double bytes = 0;
  for (double b : all.bytes) bytes += b;
  bytes /= static_cast<double>(all.bytes.size());
  row.gradient_mib = bytes / (1 << 20);
  const int syncs = rung == Rung::kNoSync ? 1 : options.accumulation;
  const double ideal =
      2.0 * (n - 1) / n * static_cast<double>(zero.parameters) * sizeof(float) * syncs;
  row.gradient_ratio = ideal > 0 ? bytes / ideal : 0;
  row.collectives = zero.times.back().collectives;
  row.buckets = zero.buckets;
  const auto& reference = one_device_losses(options);
  for (std::size_t s = 0; s < zero.losses.size(); ++s)
    row.loss_deviation =
        std::max(row.loss_deviation, std::fabs(static_cast<double>(zero.losses[s]) - reference[s]) /
                                         std::fabs(reference[s]));
  return row;
}

void progress(const LadderRow& row) {
  std::cout << "ddp: rung " << rung_name(row.rung) << ", N=" << row.ranks << ": "
            << fixed(row.step_ms, 1) << " ms/step, " << fixed(row.tokens_per_s, 0)
            << " tokens/s, hidden " << fixed(100 * row.hidden, 0) << "%\n";
}

}  // namespace

std::string mib(double bytes) {
  if (bytes >= (1 << 20)) return fixed(bytes / (1 << 20), 2) + " MiB";
  return fixed(bytes / 1024, 1) + " KiB";
}

std::vector<LadderRow> run_ladder_threads(const StageOptions& options) {
  const gemm::SgemmThreads one_thread(1);  // the ranks are the parallelism: one core each
  one_device_losses(options);
  std::vector<LadderRow> rows;
  for (Rung rung : options.rungs) {
    for (int n : options.ranks) {
      std::vector<RankMeasure> measures(static_cast<std::size_t>(n));
      coll::run_ranks(n, [&](coll::Communicator& comm) {
        measures[comm.rank()] = measure_rank(comm, options, rung);
      });
      rows.push_back(summarise(options, rung, n, measures[0], others_of(measures)));
      progress(rows.back());
    }
  }
  return rows;
}

std::vector<LadderRow> run_ladder_mpi(const StageOptions& options, coll::Communicator& world) {
  const gemm::SgemmThreads one_thread(1);
  if (world.rank() == 0) one_device_losses(options);
  std::vector<LadderRow> rows;
  for (Rung rung : options.rungs) {
    RankMeasure mine = measure_rank(world, options, rung);
    // Rank 0 needs every rank's bytes and hidden shares: gather them as doubles.
    const std::size_t steps = mine.times.size();
    std::vector<double> local(2 * steps), all(local.size() * world.size());
    for (std::size_t s = 0; s < steps; ++s) {
      local[2 * s] = static_cast<double>(mine.times[s].gradient_bytes);
      local[2 * s + 1] = mine.times[s].hidden_fraction();
    }
    world.all_gather(std::span<const double>(local), std::span<double>(all));
    if (world.rank() == 0) {
      OtherRanks others;
      for (int r = 0; r < world.size(); ++r) {
        const double* theirs = all.data() + r * local.size();
        others.bytes.push_back(theirs[2 * (steps - 1)]);
        others.hidden.emplace_back();
        for (std::size_t s = 0; s < steps; ++s) others.hidden.back().push_back(theirs[2 * s + 1]);
      }
      rows.push_back(summarise(options, rung, world.size(), mine, others));
      progress(rows.back());
    }
  }
  return rows;
}

double one_device_step_ms(const StageOptions& options) {
  train::Trainer trainer(run_options(options, Rung::kFlat).train);
  std::vector<double> times;
  for (int s = 0; s < options.warmup + options.steps; ++s) {
    const Timer timer;
    trainer.step();
    if (s >= options.warmup) times.push_back(timer.seconds());
  }
  return 1e3 * median_of(times);
}

void report_ladder(const StageOptions& options, const std::vector<LadderRow>& rows) {
  Table table({"rung", "N", "step ms", "tokens/s", "speed-up", "bytes/rank/step",
               "÷ 2(N-1)/N·S·syncs", "collectives/step", "buckets", "fwd+bwd ms", "optimizer ms",
               "comm ms", "exposed ms", "hidden %", "loss dev."});
  std::map<Rung, double> one_rank;  // tokens/s of N = 1 per rung, for the speed-up
  for (const LadderRow& r : rows)
    if (r.ranks == 1) one_rank[r.rung] = r.tokens_per_s;
  for (const LadderRow& r : rows) {
    char deviation[32];
    std::snprintf(deviation, sizeof deviation, "%.1e", r.loss_deviation);
    table.add_row({rung_name(r.rung), std::to_string(r.ranks), fixed(r.step_ms, 1),
                   fixed(r.tokens_per_s, 0),
                   one_rank.count(r.rung) ? fixed(r.tokens_per_s / one_rank[r.rung], 2) + "x" : "-",
                   mib(r.gradient_mib * (1 << 20)), r.ranks > 1 ? fixed(r.gradient_ratio, 3) : "-",
                   std::to_string(r.collectives), r.buckets ? std::to_string(r.buckets) : "-",
                   fixed(r.compute_ms, 1), fixed(r.optimizer_ms, 1), fixed(r.comm_busy_ms, 2),
                   fixed(r.comm_wait_ms, 2),
                   r.ranks == 1                ? "-"
                   : overlaps_backward(r.rung) ? fixed(100 * r.hidden, 0)
                                               : "0",
                   r.loss_deviation == 0 ? "0 (bitwise)" : deviation});
  }
  std::cout << "\n## The ladder (" << options.backend << ")\n\n" << table.markdown() << "\n";
  const std::string dir = results_dir();
  table.write_csv(dir + "/ch05_ddp_ladder.csv");
  table.write_json(dir + "/ch05_ddp_ladder.json");
  std::cout << "written: " << dir << "/ch05_ddp_ladder.csv and .json\n";
}

}  // namespace book::ddp::stage
