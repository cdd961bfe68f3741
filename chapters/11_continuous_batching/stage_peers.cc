// The stage's section "Static against continuous batching": one request at a time, static batches
// and continuous batching on one workload, offline and online; the latency-vs-rate curve and the
// rows-per-step picture.
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>

#include "chapters/11_continuous_batching/stage.h"
#include "common/table.h"

namespace book::serve::stage {

Peers peers_section(const StageOptions& o) {
  const CostModel cost;
  const Slo slo = stage_slo(o);
  // The peers on one workload: offline (everything at t = 0) and online (Poisson).
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
  const std::string dir = results_dir();
  peers.write_csv(dir + "/ch11_peers.csv");
  peers.write_json(dir + "/ch11_peers.json");

  std::ostringstream tour;
  tour << "tour: 11 | offline capacity, continuous vs static batch " << o.max_batch << " | "
       << ratio(s_cont.tokens_per_s, s_static.tokens_per_s) << " ("
       << fixed(s_cont.tokens_per_s, 0) << " vs " << fixed(s_static.tokens_per_s, 0)
       << " tok/s; one at a time " << fixed(s_one.tokens_per_s, 0)
       << ") | continuous batching refills the batch every step instead of padding\n"
       << "tour: 11 | online E2E P99 at " << fixed(o.rate, 1) << "/s, static vs continuous | "
       << fixed(so.e2e_p99 / 1000, 1) << " s vs " << fixed(co.e2e_p99 / 1000, 1)
       << " s | more throughput and a better tail: nobody waits for the longest member\n";
  return {continuous, fixed_batches, s_cont.requests_per_s, tour.str()};
}

void rates_section(const StageOptions& o, const Peers& peers) {
  const CostModel cost;
  const Slo slo = stage_slo(o);
  Table rates({"rate", "static_e2e_p99_s", "static_e2e_p50_s", "continuous_e2e_p99_s",
               "continuous_e2e_p50_s"});
  // Geometric rates from 0.1/s to past the continuous engine's capacity.
  for (double r = 0.1; r < 1.3 * peers.continuous_requests_per_s;
       r *= o.tour ? 2.0 : std::sqrt(2.0)) {
    const auto w = workload(o, r);
    const auto st = summarize(simulate_static(w, o.max_batch, cost).timings, slo);
    const auto ct = summarize(
        simulate_continuous(w, continuous_options(o, o.max_batch, o.token_budget), cost).timings,
        slo);
    rates.add_row({fixed(r, 2), fixed(st.e2e_p99 / 1000, 2), fixed(st.e2e_p50 / 1000, 2),
                   fixed(ct.e2e_p99 / 1000, 2), fixed(ct.e2e_p50 / 1000, 2)});
  }
  std::cout << "## End-to-end latency vs request rate (s)\n\n" << rates.markdown() << "\n";
  const std::string dir = results_dir();
  rates.write_csv(dir + "/ch11_rates.csv");
  std::cout << "Wrote " << plot_rates(dir + "/ch11_rates.csv", dir) << "\n";
  std::cout << "Wrote "
            << plot_steps(peers.continuous, peers.fixed_batches, 600, 2 * o.max_batch, dir)
            << "\n\n";
}

std::string plot_steps(const SimResult& continuous, const SimResult& fixed_batches, int steps,
                       int top, const std::string& dir) {
  Table csv({"step", "c_decode", "c_prefill", "s_decode", "s_padding", "s_prefill"});
  for (int i = 0; i < steps; ++i) {
    auto cell = [&](const SimResult& r, auto field) {
      return i < static_cast<int>(r.steps.size()) ? std::to_string(field(r.steps[i])) : "NaN";
    };
    csv.add_row({std::to_string(i + 1),
                 cell(continuous, [](const StepSample& s) { return s.decode_rows; }),
                 cell(continuous, [](const StepSample& s) { return s.prefill_rows; }),
                 cell(fixed_batches, [](const StepSample& s) { return s.decode_rows; }),
                 cell(fixed_batches, [](const StepSample& s) { return s.padding_rows; }),
                 cell(fixed_batches, [](const StepSample& s) { return s.prefill_rows; })});
  }
  const std::string data = dir + "/ch11_steps.csv", png = dir + "/ch11_steps.png";
  csv.write_csv(data);
  const std::string script =
      "set terminal pngcairo size 900,560; set output '" + png +
      "'; set datafile separator ','; set datafile missing 'NaN'; set multiplot layout 2,1;"
      " set style fill solid 1 noborder; set key outside right;"
      " set ylabel 'rows in the step'; set yrange [0:" +
      std::to_string(top) +
      "];"
      " set title 'continuous (all requests at t = 0): a finished request''s slot refills at once';"
      " plot '" +
      data +
      "' u 1:(\\$2+\\$3) skip 1 w impulses lc rgb '#ff7f0e' t 'prefill rows',"
      " '' u 1:2 skip 1 w filledcurves x1 lc rgb '#1f77b4' t 'decode rows';"
      " set title 'static: the batch decodes until its longest member is done; finished members "
      "pad';"
      " set xlabel 'model step (prefill steps clipped)';"
      " plot '' u 1:(\\$4+\\$5+\\$6) skip 1 w impulses lc rgb '#ff7f0e' t 'prefill rows',"
      " '' u 1:(\\$4+\\$5) skip 1 w filledcurves x1 lc rgb '#bbbbbb' t 'padding rows',"
      " '' u 1:4 skip 1 w filledcurves x1 lc rgb '#1f77b4' t 'decode rows'; unset multiplot";
  const std::string command = "gnuplot -e \"" + script + "\" 2>/dev/null";
  if (std::system(command.c_str()) != 0)
    return data + " (plot skipped: gnuplot not found; apt-get install gnuplot-nox)";
  return data + ", " + png;
}

std::string plot_rates(const std::string& csv, const std::string& dir) {
  const std::string png = dir + "/ch11_latency_vs_rate.png";
  const std::string script =
      "set terminal pngcairo size 900,500; set output '" + png +
      "'; set datafile separator ','; set logscale xy; set key top left;"
      " set xlabel 'request rate (requests/s, Poisson)'; set ylabel 'end-to-end latency (s)';"
      " set title 'latency vs load (simulated clock, 7B-like cost model)';"
      " plot '" +
      csv +
      "' u 1:2 skip 1 w lp lw 2 lc rgb '#d62728' t 'static P99',"
      " '' u 1:3 skip 1 w lp dt 2 lc rgb '#d62728' t 'static P50',"
      " '' u 1:4 skip 1 w lp lw 2 lc rgb '#1f77b4' t 'continuous P99',"
      " '' u 1:5 skip 1 w lp dt 2 lc rgb '#1f77b4' t 'continuous P50'";
  const std::string command = "gnuplot -e \"" + script + "\" 2>/dev/null";
  if (std::system(command.c_str()) != 0)
    return csv + " (plot skipped: gnuplot not found; apt-get install gnuplot-nox)";
  return csv + ", " + png;
}

}  // namespace book::serve::stage
