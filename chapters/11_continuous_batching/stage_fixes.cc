// The stage's section "The two P99 fixes": on twice the stage's max batch, at 90% of its
// capacity, an SLO-driven admission threshold and token budget (fix 1), and two replicas with a
// fast lane for short requests and a slow one for long (fix 2).
#include <algorithm>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "chapters/11_continuous_batching/stage.h"
#include "common/table.h"

namespace book::serve::stage {

TourLines fixes_section(const StageOptions& o) {
  const CostModel cost;
  const Slo slo = stage_slo(o);
  const auto offline = workload(o, 0);
  const int big = 2 * o.max_batch;  // the sweep's +20%
  Table fixes = summary_table();
  const auto plain_options = continuous_options(o, big, std::max(big, kSweepBudgets.back()));
  // Both fixes at 90% of the plain engine's capacity: load where the tail matters.
  const double fix_rate =
      0.9 *
      summarize(simulate_continuous(offline, plain_options, cost).timings, slo).requests_per_s;
  const auto loaded = workload(o, fix_rate);
  auto slo_options = plain_options;
  slo_options.step_slo_ms = slo.tpot_ms;
  const SimResult plain_run = simulate_continuous(loaded, plain_options, cost);
  const SimResult fix1_run = simulate_continuous(loaded, slo_options, cost);
  const auto plain =
      add_summary(fixes,
                  "continuous, max " + std::to_string(big) + " running, " +
                      std::to_string(plain_options.scheduler.token_budget) + " tok/step",
                  plain_run, slo);
  const double itl_plain = inter_token_percentile(plain_run, 99);
  const double itl_fix1 = inter_token_percentile(fix1_run, 99);
  const auto fix1 =
      add_summary(fixes, "fix 1: admit only while a step stays <= " + fixed(slo.tpot_ms, 0) + " ms",
                  fix1_run, slo);
  const auto online2 = workload(o, 2 * fix_rate);
  const int threshold = balanced_lane_threshold(online2);
  const auto [alternating, lanes] = simulate_lanes(online2, plain_options, cost, threshold);
  const auto alt = add_summary(fixes, "2 replicas at " + fixed(2 * fix_rate, 1) + "/s: alternating",
                               alternating, slo);
  const auto lane = add_summary(
      fixes,
      "fix 2: 2 replicas, fast lane <= " + std::to_string(threshold) + " tokens, slow lane above",
      lanes, slo);
  // The short requests' view: what the fast lane is for.
  auto short_only = [&](const SimResult& r) {
    std::vector<RequestTiming> t;
    for (std::size_t i = 0; i < online2.size(); ++i)
      if (online2[i].prompt_tokens + online2[i].output_tokens <= threshold)
        t.push_back(r.timings[i]);
    return summarize(t, slo);
  };
  const auto alt_short = short_only(alternating), lane_short = short_only(lanes);
  std::cout << "## The two P99 fixes, online at " << fixed(fix_rate, 2)
            << " requests/s (90% of the capacity of max " << big
            << " running; lanes: twice that on two replicas)\n\n"
            << fixes.markdown() << "\nShort requests (<= " << threshold
            << " tokens) only: TTFT P99 " << fixed(alt_short.ttft_p99, 0) << " ms alternating, "
            << fixed(lane_short.ttft_p99, 0) << " ms in the fast lane; TPOT P99 "
            << fixed(alt_short.tpot_p99, 1) << " ms vs " << fixed(lane_short.tpot_p99, 1)
            << " ms.\n\n";
  const std::string dir = results_dir();
  fixes.write_csv(dir + "/ch11_fixes.csv");
  fixes.write_json(dir + "/ch11_fixes.json");

  std::ostringstream tour;
  tour << "tour: 11 | fix 1, SLO-driven admission and budget: ITL P99 | " << fixed(itl_plain, 1)
       << " -> " << fixed(itl_fix1, 1) << " ms, goodput " << fixed(plain.goodput, 2) << " -> "
       << fixed(fix1.goodput, 2) << " req/s | cap the step, not the batch\n"
       << "tour: 11 | fix 2, fast/slow lanes: short requests' TTFT P99 | "
       << fixed(alt_short.ttft_p99, 0) << " -> " << fixed(lane_short.ttft_p99, 0)
       << " ms (all: goodput " << fixed(alt.goodput, 2) << " -> " << fixed(lane.goodput, 2)
       << " req/s) | short requests stop queueing behind long ones\n";
  return tour.str();
}

}  // namespace book::serve::stage
