// "Throughput against P99": chapter 11's serving trade-off on its simulated clock, one table.
#include <iostream>
#include <string>

#include "chapters/15_production_training/p99.h"
#include "chapters/15_production_training/stage.h"
#include "common/table.h"

namespace book::prod::stage {
namespace {

std::string percent(double fraction) { return fixed(100 * fraction, 1) + "%"; }

// A signed percentage change: "+29.5%".
std::string change(double now, double before) {
  const double p = 100 * (now / before - 1);
  return (p >= 0 ? "+" : "") + fixed(p, 1) + "%";
}

}  // namespace

void p99_section(const StageOptions& options) {
  const std::string dir = results_dir();  // before the run: a folder we cannot write fails now
  const ThroughputAgainstP99 t = throughput_against_p99();
  Table table({"comparison", "config", "capacity out tok/s",
               "vs max " + std::to_string(kSmallerBatch), "served at req/s", "out tok/s",
               "TPOT P99 ms", "SLO met"});
  auto row = [&](const std::string& comparison, const ServingPoint& p) {
    table.add_row({comparison, p.config, fixed(p.capacity_tokens_per_s, 0),
                   &p == &t.smaller_batch
                       ? std::string("baseline")
                       : change(p.capacity_tokens_per_s, t.smaller_batch.capacity_tokens_per_s),
                   fixed(p.rate, 2), fixed(p.online.tokens_per_s, 0), fixed(p.online.tpot_p99, 1),
                   percent(p.online.slo_attained)});
  };
  row("1: bigger batch", t.smaller_batch);
  row("1: bigger batch", t.bigger_batch);
  row("2: SLO threshold", t.threshold_at_slo);
  row("2: SLO threshold", t.threshold);
  row("3: static batching", t.static_batches);
  std::cout << "\n## Throughput against P99 (chapter 11's simulated clock: " << t.requests
            << " requests, each configuration's capacity, then served online at "
            << fixed(100 * kServingLoad, 0)
            << "% of it; SLO: first token <= " << fixed(t.slo.ttft_ms, 0)
            << " ms, TPOT <= " << fixed(t.slo.tpot_ms, 0) << " ms)\n\n"
            << table.markdown() << "\n1: max running " << kSmallerBatch << " -> " << kBiggerBatch
            << ": capacity "
            << change(t.bigger_batch.capacity_tokens_per_s, t.smaller_batch.capacity_tokens_per_s)
            << ", TPOT P99 " << fixed(t.smaller_batch.online.tpot_p99, 1) << " -> "
            << fixed(t.bigger_batch.online.tpot_p99, 1) << " ms, SLO met "
            << percent(t.smaller_batch.online.slo_attained) << " -> "
            << percent(t.bigger_batch.online.slo_attained)
            << ".\n2: an admission threshold at the SLO leaves TPOT P99 at "
            << fixed(t.threshold_at_slo.online.tpot_p99, 1) << " ms; "
            << fixed(kThresholdMarginMs, 0) << " ms below it, TPOT P99 is "
            << fixed(t.threshold.online.tpot_p99, 1) << " ms and "
            << percent(t.threshold.online.slo_attained) << " meet the SLO, for a capacity "
            << change(t.threshold.capacity_tokens_per_s, t.bigger_batch.capacity_tokens_per_s)
            << " against max " << kBiggerBatch << " unconstrained ("
            << change(t.threshold.capacity_tokens_per_s, t.smaller_batch.capacity_tokens_per_s)
            << " against max " << kSmallerBatch
            << ").\n3: continuous over static batching: " << fixed(t.continuous_over_static, 2)
            << "x the capacity.\n";
  table.write_csv(dir + "/ch15_p99.csv");
  table.write_json(dir + "/ch15_p99.json");
  if (options.tour)
    std::cout << "tour: 15 | "
              << change(t.bigger_batch.capacity_tokens_per_s, t.smaller_batch.capacity_tokens_per_s)
              << " throughput at max running " << kBiggerBatch << " | SLO attainment "
              << percent(t.smaller_batch.online.slo_attained) << " -> "
              << percent(t.bigger_batch.online.slo_attained)
              << " | +20% throughput with a worse P99 is usually not worth it\n";
}

}  // namespace book::prod::stage
