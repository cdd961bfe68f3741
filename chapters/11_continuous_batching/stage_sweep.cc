// The stage's section "Throughput against P99": every max running × token budget, its capacity
// (all requests at t = 0), then served online at 90% of that capacity.
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "chapters/11_continuous_batching/stage.h"
#include "common/table.h"

namespace book::serve::stage {

TourLines sweep_section(const StageOptions& o) {
  const CostModel cost;
  const Slo slo = stage_slo(o);
  const auto offline = workload(o, 0);
  Table sweep({"max running", "token budget", "capacity out tok/s", "at 90%: req/s", "out tok/s",
               "TTFT P99 ms", "TPOT P99 ms", "ITL P99 ms", "E2E P99 s", "SLO met"});
  const std::vector<int> batches =
      o.tour ? std::vector<int>{32, 64, 128} : std::vector<int>{16, 32, 64, 128, 256};
  struct Point {
    int batch, budget;
    double capacity, tpot_p99, itl_p99, slo_met;
  };
  std::vector<Point> points;
  for (const int b : batches)
    for (const int t : kSweepBudgets) {
      if (t < b) continue;
      const auto options = continuous_options(o, b, t);
      const auto cap = summarize(simulate_continuous(offline, options, cost).timings, slo);
      const auto loaded = workload(o, 0.9 * cap.requests_per_s);  // 90% of its own capacity
      const SimResult run = simulate_continuous(loaded, options, cost);
      const auto on = summarize(run.timings, slo);
      const double itl = inter_token_percentile(run, 99);
      sweep.add_row({std::to_string(b), std::to_string(t), fixed(cap.tokens_per_s, 0),
                     fixed(0.9 * cap.requests_per_s, 2), fixed(on.tokens_per_s, 0),
                     fixed(on.ttft_p99, 0), fixed(on.tpot_p99, 1), fixed(itl, 1),
                     fixed(on.e2e_p99 / 1000, 2), fixed(100 * on.slo_attained, 1) + "%"});
      points.push_back({b, t, cap.tokens_per_s, on.tpot_p99, itl, on.slo_attained});
    }
  std::cout << "## Throughput vs P99: max running × token budget (capacity: all requests at "
               "t = 0; then each served online at 90% of its own capacity, Poisson)\n\n"
            << sweep.markdown() << "\n";
  const std::string dir = results_dir();
  sweep.write_csv(dir + "/ch11_sweep.csv");
  sweep.write_json(dir + "/ch11_sweep.json");

  // The first pair of neighbours in the sweep where capacity grows >= 20% while the TPOT P99
  // worsens and fewer requests meet the SLO.
  std::ostringstream tour;
  const std::size_t stride = kSweepBudgets.size();  // the next max running, same budget
  for (std::size_t i = 0; i + stride < points.size(); ++i) {
    const Point &a = points[i], &b = points[i + stride];
    if (b.capacity >= 1.2 * a.capacity && b.tpot_p99 > a.tpot_p99 && b.slo_met < a.slo_met) {
      tour << "tour: 11 | max running " << a.batch << " -> " << b.batch << " (budget " << a.budget
           << ") | capacity " << ratio(b.capacity, a.capacity) << ", ITL P99 "
           << fixed(a.itl_p99, 1) << " -> " << fixed(b.itl_p99, 1) << " ms, TPOT P99 "
           << fixed(a.tpot_p99, 1) << " -> " << fixed(b.tpot_p99, 1) << " ms, SLO met "
           << fixed(100 * a.slo_met, 1) << "% -> " << fixed(100 * b.slo_met, 1)
           << "% | +20% throughput can cost the P99\n";
      break;
    }
  }
  return tour.str();
}

}  // namespace book::serve::stage
