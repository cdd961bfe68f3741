// bazel run -c opt //chapters/11_continuous_batching:serve_bench [-- --tour] [--requests N]
//     [--rate R] [--gamma-shape K] [--seed N] [--max-batch N] [--token-budget N] [--kv-blocks N]
//     [--slo-ttft-ms T] [--slo-tpot-ms T]
//     [--wall-clock [--wall-requests N] [--wall-reps N] [--wall-threads N]]
//     (--help lists them)
//
// Continuous batching measured on a simulated clock: the real scheduler (the exercises, on
// chapter 10's BlockManager) decides every step of a seeded long-tailed workload, and a per-step
// cost model of a 7B fp16 model on one A100-class GPU says how long each step took (simulate.h).
// Prints, in one run: static batching and one-at-a-time against continuous batching (offline
// capacity and online latency), the sweep of max batch × token budget (throughput against P99),
// the two P99 fixes (an SLO-driven token budget; fast/slow lanes), and the latency-vs-rate curve;
// writes CSV/JSON and two pictures under results/.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <string>

#include "chapters/10_paged_attention/served_model.h"
#include "chapters/11_continuous_batching/serve_report.h"
#include "common/machine_load.h"
#include "common/main.h"
#include "common/timer.h"

namespace {

using namespace book;
using namespace book::serve;
using namespace book::serve::stage;

std::string ratio(double a, double b) { return fixed(a / b, 2) + "x"; }

int body(int argc, char** argv) {
  StageOptions o = parse_options({argv + 1, argv + argc});
  if (o.checkpoint.empty())
    o.checkpoint = kv::runfile("chapters/10_paged_attention/addition_checkpoint.bin", argv[0]);
  print_machine_load();
  if (o.tour)
    std::cout << "tour-config: 11 | serve_bench --tour: " << o.requests
              << " requests (the chapter's run: 1000), rate " << fixed(o.rate, 1)
              << "/s, max batch " << o.max_batch << ", budget " << o.token_budget
              << " tokens/step, the same sweeps with fewer rates\n";
  const std::string dir = results_dir();
  const CostModel cost;
  const Slo slo{o.slo_ttft_ms, o.slo_tpot_ms};
  std::cout << "# Chapter 11: continuous batching\n\n"
            << "Simulated clock: the real scheduler on chapter 10's BlockManager decides every "
               "step; a step of r new tokens whose sequences hold c positions costs "
            << fixed(cost.step_ms, 1) << " + " << fixed(cost.per_token_ms, 3) << "·r + "
            << fixed(cost.per_context_ms * 1000, 2) << "e-3·c + "
            << fixed(cost.per_pair_ms * 1e6, 0)
            << "e-6·q ms for q (query, key) pairs (a 7B fp16 model on one A100-class GPU; a cost "
               "model, not a "
               "measurement). SLO: TTFT <= "
            << fixed(slo.ttft_ms, 0) << " ms and TPOT <= " << fixed(slo.tpot_ms, 0) << " ms.\n\n";

  // 1. The peers on one workload: offline (everything at t = 0) and online (Poisson).
  const auto offline = workload(o, 0);
  const auto online = workload(o, o.rate);
  Table peers = summary_table();
  const SimResult one = simulate_static(offline, 1, cost);
  const SimResult fixed_batches = simulate_static(offline, o.max_batch, cost);
  const SimResult continuous =
      simulate_continuous(offline, continuous_options(o, o.max_batch, o.token_budget), cost);
  const auto s_one = add_summary(peers, "offline: one at a time", one, slo);
  const auto s_static = add_summary(peers, "offline: static, batch " + std::to_string(o.max_batch),
                                    fixed_batches, slo);
  const auto s_cont = add_summary(peers,
                                  "offline: continuous, max " + std::to_string(o.max_batch) + ", " +
                                      std::to_string(o.token_budget) + " tok/step",
                                  continuous, slo);
  const SimResult static_online = simulate_static(online, o.max_batch, cost);
  const SimResult cont_online =
      simulate_continuous(online, continuous_options(o, o.max_batch, o.token_budget), cost);
  const auto so =
      add_summary(peers, "online " + fixed(o.rate, 1) + "/s: static", static_online, slo);
  const auto co =
      add_summary(peers, "online " + fixed(o.rate, 1) + "/s: continuous", cont_online, slo);
  std::cout << "## Static vs continuous batching, " << o.requests
            << " requests (chapter 10's ShareGPT-like lengths: medians 100 and 200 tokens, "
               "log-normal, 2% image-sized prompts)\n\n"
            << peers.markdown() << "\n";
  peers.write_csv(dir + "/ch11_peers.csv");
  peers.write_json(dir + "/ch11_peers.json");

  // 2. The sweep: max running × token budget, capacity (offline) and P99 (online).
  Table sweep({"max running", "token budget", "capacity out tok/s", "at 90%: req/s", "out tok/s",
               "TTFT P99 ms", "TPOT P99 ms", "ITL P99 ms", "E2E P99 s", "SLO met"});
  const std::vector<int> batches =
      o.tour ? std::vector<int>{32, 64, 128} : std::vector<int>{16, 32, 64, 128, 256};
  const std::vector<int> budgets = {512, 2048};
  struct Point {
    int batch, budget;
    double capacity, tpot_p99, itl_p99, slo_met;
  };
  std::vector<Point> points;
  for (const int b : batches)
    for (const int t : budgets) {
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
  sweep.write_csv(dir + "/ch11_sweep.csv");
  sweep.write_json(dir + "/ch11_sweep.json");

  // 3. The two P99 fixes, on twice the stage's max batch (the sweep's +20%).
  const int big = 2 * o.max_batch;
  Table fixes = summary_table();
  const auto plain_options = continuous_options(o, big, std::max(big, budgets.back()));
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
  fixes.write_csv(dir + "/ch11_fixes.csv");
  fixes.write_json(dir + "/ch11_fixes.json");

  // 4. Latency vs rate, static and continuous.
  Table rates({"rate", "static_e2e_p99_s", "static_e2e_p50_s", "continuous_e2e_p99_s",
               "continuous_e2e_p50_s"});
  // Geometric rates from 0.1/s to past the continuous engine's capacity.
  for (double r = 0.1; r < 1.3 * s_cont.requests_per_s; r *= o.tour ? 2.0 : std::sqrt(2.0)) {
    const auto w = workload(o, r);
    const auto st = summarize(simulate_static(w, o.max_batch, cost).timings, slo);
    const auto ct = summarize(
        simulate_continuous(w, continuous_options(o, o.max_batch, o.token_budget), cost).timings,
        slo);
    rates.add_row({fixed(r, 2), fixed(st.e2e_p99 / 1000, 2), fixed(st.e2e_p50 / 1000, 2),
                   fixed(ct.e2e_p99 / 1000, 2), fixed(ct.e2e_p50 / 1000, 2)});
  }
  std::cout << "## End-to-end latency vs request rate (s)\n\n" << rates.markdown() << "\n";
  rates.write_csv(dir + "/ch11_rates.csv");
  std::cout << "Wrote " << plot_rates(dir + "/ch11_rates.csv", dir) << "\n";
  std::cout << "Wrote " << plot_steps(continuous, fixed_batches, 600, 2 * o.max_batch, dir)
            << "\n\n";

  // 5. The real engine on chapter 4's trained model: answers graded under preemption.
  const EngineRun engine = run_addition(o.checkpoint, o.tour ? 200 : 1000);
  std::cout << "## The engine on chapter 4's trained addition model\n\n"
            << engine.sums << " held-out sums through the engine (32 running, 64 rows per step, "
            << "40 KV blocks of 2 tokens): " << engine.correct << " answers right, "
            << engine.equal_to_alone << " of " << engine.sums
            << " token for token equal to the same sum served alone; " << engine.preemptions
            << " preemptions, up to " << engine.most_running << " running; "
            << engine.steps_continuous << " model steps against " << engine.steps_one_at_a_time
            << " one at a time (counted, not timed).\n\n";
  Table modes({"preemption", "preempted", "positions recomputed", "rows run", "KV bytes swapped",
               "steps", "answers equal to alone"});
  const auto mode_row = [&](const std::string& name, const PreemptionCost& c, int equal) {
    modes.add_row({name, std::to_string(c.preemptions), std::to_string(c.dropped_positions),
                   std::to_string(c.rows), std::to_string(c.bytes_swapped), std::to_string(c.steps),
                   std::to_string(equal) + "/" + std::to_string(engine.sums)});
  };
  mode_row("recompute", engine.recompute, engine.equal_to_alone);
  mode_row("swap (host arena of 64 blocks)", engine.swap, engine.swap_equal_to_alone);
  std::cout << "### Recompute vs swap on the same sums\n\n"
            << modes.markdown() << "\nSwap: " << engine.swapped_out
            << " victims to the host arena, " << engine.swap_fallbacks
            << " recomputed because it was full; bytes count K and V both ways (counted, not "
               "timed).\n\n";
  modes.write_csv(dir + "/ch11_preemption.csv");
  modes.write_json(dir + "/ch11_preemption.json");

  // 6. Wall-clock (--wall-clock): the real engine timed, continuous vs static, same run.
  if (o.wall_clock) {
    std::cout << "## Wall clock: the real engine on this machine\n\n"
              << "Timing " << o.wall_reps << " interleaved repetitions of " << o.wall_requests
              << " requests (all at t = 0; chapter 10's long-tailed lengths scaled by 1/8 to the "
                 "model's 256-token context): every setting once, then the best of each side ..."
              << std::endl;
    const WallClock w = run_wall_clock(o.wall_requests, o.wall_reps,
                                       static_cast<std::uint64_t>(o.seed), o.wall_threads);
    const Table selection = wall_selection_table(w);
    const Table table = wall_clock_table(w);
    std::cout
        << "\n### Every setting once (the selection)\n\n"
        << selection.markdown() << "\n### The best of each side, " << w.repetitions
        << " interleaved repetitions\n\n"
        << table.markdown() << "\nBest continuous: " << w.continuous.name
        << "; the peer, static batching at its best: " << w.fixed_batches.name
        << ". Continuous / static output tokens/s: " << ratio(median(w.ratios), 1)
        << " (median of the per-repetition ratios; spread "
        << fixed(100 * relative_spread(w.ratios), 1) << "%; range "
        << ratio(*std::min_element(w.ratios.begin(), w.ratios.end()), 1) << " to "
        << ratio(*std::max_element(w.ratios.begin(), w.ratios.end()), 1)
        << "). Medians of the repetitions; a stopwatch on this machine, not the cost "
           "model. Steps and rows are counted; µs/row is a run's time over its rows; the engine "
           "ran on "
        << w.threads << " thread(s).\n\n";
    selection.write_csv(dir + "/ch11_wall_clock_selection.csv");
    table.write_csv(dir + "/ch11_wall_clock.csv");
    table.write_json(dir + "/ch11_wall_clock.json");
  }

  // The tour's headline lines.
  std::cout << "tour: 11 | offline capacity, continuous vs static batch " << o.max_batch << " | "
            << ratio(s_cont.tokens_per_s, s_static.tokens_per_s) << " ("
            << fixed(s_cont.tokens_per_s, 0) << " vs " << fixed(s_static.tokens_per_s, 0)
            << " tok/s; one at a time " << fixed(s_one.tokens_per_s, 0)
            << ") | continuous batching refills the batch every step instead of padding\n"
            << "tour: 11 | online E2E P99 at " << fixed(o.rate, 1) << "/s, static vs continuous | "
            << fixed(so.e2e_p99 / 1000, 1) << " s vs " << fixed(co.e2e_p99 / 1000, 1)
            << " s | more throughput and a better tail: nobody waits for the longest member\n";
  // The first pair of neighbours in the sweep where capacity grows >= 20% while the TPOT P99
  // worsens and fewer requests meet the SLO.
  for (std::size_t i = 0; i + budgets.size() < points.size(); ++i) {
    const Point &a = points[i], &b = points[i + budgets.size()];  // next max running, same budget
    if (b.capacity >= 1.2 * a.capacity && b.tpot_p99 > a.tpot_p99 && b.slo_met < a.slo_met) {
      std::cout << "tour: 11 | max running " << a.batch << " -> " << b.batch << " (budget "
                << a.budget << ") | capacity " << ratio(b.capacity, a.capacity) << ", ITL P99 "
                << fixed(a.itl_p99, 1) << " -> " << fixed(b.itl_p99, 1) << " ms, TPOT P99 "
                << fixed(a.tpot_p99, 1) << " -> " << fixed(b.tpot_p99, 1) << " ms, SLO met "
                << fixed(100 * a.slo_met, 1) << "% -> " << fixed(100 * b.slo_met, 1)
                << "% | +20% throughput can cost the P99\n";
      break;
    }
  }
  std::cout << "tour: 11 | fix 1, SLO-driven admission and budget: ITL P99 | "
            << fixed(itl_plain, 1) << " -> " << fixed(itl_fix1, 1) << " ms, goodput "
            << fixed(plain.goodput, 2) << " -> " << fixed(fix1.goodput, 2)
            << " req/s | cap the step, not the batch\n"
            << "tour: 11 | fix 2, fast/slow lanes: short requests' TTFT P99 | "
            << fixed(alt_short.ttft_p99, 0) << " -> " << fixed(lane_short.ttft_p99, 0)
            << " ms (all: goodput " << fixed(alt.goodput, 2) << " -> " << fixed(lane.goodput, 2)
            << " req/s) | short requests stop queueing behind long ones\n"
            << "tour: 11 | trained addition model through the engine, preempting | "
            << engine.correct << "/" << engine.sums << " right, " << engine.equal_to_alone << "/"
            << engine.sums << " equal to served alone, " << engine.steps_continuous << " vs "
            << engine.steps_one_at_a_time << " steps | batching changes the cost, not the answers\n"
            << "tour: 11 | preemption, recompute vs swap | " << engine.recompute.dropped_positions
            << " positions recomputed vs " << engine.swap.bytes_swapped << " bytes swapped ("
            << engine.recompute.rows << " vs " << engine.swap.rows
            << " rows run) | swap trades recomputation for copies over the bus\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return book::run_main(argc, argv, body); }
