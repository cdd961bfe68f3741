// The simulated clock at 7B scale: four GPUs as four colocated replicas (chunked prefill) or split
// 2P+2D, 1P+3D, 3P+1D, the KV priced on NVLink, a 200G NIC or 10G Ethernet, over arrival rates
// and prompt lengths. Where colocation wins is what the sweep finds, cell by cell.
#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <map>
#include <tuple>

#include "chapters/13_disaggregation_speculation/pd/pd_sim.h"
#include "chapters/13_disaggregation_speculation/pd/pd_stage.h"
#include "common/table.h"

namespace book::pd::stage {
namespace {

// deployments(): the two colocated peers first, then the splits.
constexpr std::size_t kFirstSplit = 2;

std::vector<SimDeployment> deployments() {
  SimDeployment base;
  base.replica.scheduler = {64, 512, true};
  std::vector<SimDeployment> out;
  SimDeployment colocated = base;
  colocated.colocated = true;
  colocated.decode_workers = 4;
  out.push_back(colocated);
  // The peer DistServe measured against: colocated without chunked prefill (a whole prompt per
  // step, so every prefill stalls every decode of its replica for the whole prompt).
  colocated.replica.scheduler = {64, 4096, false};
  out.push_back(colocated);
  for (const LinkModel& link : {nvlink_link(), network_link(), slow_link()}) {
    SimDeployment d = base;
    d.link = link;
    out.push_back(d);  // 2P+2D
  }
  for (const auto& [p, d] : {std::pair{1, 3}, {3, 1}}) {
    SimDeployment s = base;
    s.prefill_workers = p;
    s.decode_workers = d;
    s.link = network_link();
    out.push_back(s);
  }
  return out;
}

// A colocated cell beats a split one when it serves more requests within the SLO; at equal
// goodput (within 2%), when its median request finishes sooner.
bool colocation_wins(const serve::ServingSummary& c, const serve::ServingSummary& s) {
  if (c.goodput > 1.02 * s.goodput) return true;
  if (s.goodput > 1.02 * c.goodput) return false;
  return c.e2e_p50 < s.e2e_p50;
}

std::string plot(const std::string& csv, const std::string& dir, int prompt) {
  const std::string png = dir + "/ch13_pd_vs_rate.png";
  const std::string script =
      "set terminal pngcairo size 1000,420 font ',10'; set output '" + png +
      "'; set datafile separator ','; set multiplot layout 1,2 title 'prompt " +
      std::to_string(prompt) +
      " tokens, 4 GPUs at 7B (simulated clock)'; set key top left; set xlabel 'arrival rate "
      "(requests/s)'; set ylabel 'P99 TPOT (ms)'; set logscale y;"
      " plot '" +
      csv +
      "' u 1:2 skip 1 w lp lw 2 t '4 colocated, chunked', '' u 1:8 skip 1 w lp lw 2 dt 2 t '4 "
      "colocated, whole prompts', '' u 1:3 skip 1 w lp lw 2 t '2P+2D NVLink',"
      " '' u 1:4 skip 1 w lp lw 2 t '2P+2D 10G Ethernet'; unset logscale y; set ylabel 'goodput "
      "(requests/s within SLO)'; plot '' u 1:5 skip 1 w lp lw 2 t '4 colocated, chunked', '' u "
      "1:9 skip 1 w lp lw 2 dt 2 t '4 colocated, whole prompts', '' u 1:6 skip 1 "
      "w lp lw 2 t '2P+2D NVLink', '' u 1:7 skip 1 w lp lw 2 t '2P+2D 10G Ethernet'; unset "
      "multiplot";
  if (std::system(("gnuplot -e \"" + script + "\" 2>/dev/null").c_str()) != 0)
    return csv + " (plot skipped: gnuplot not found; apt-get install gnuplot-nox)";
  return csv + ", " + png;
}

}  // namespace

void run_sweep(const StageOptions& o, const std::string& dir) {
  const serve::Slo slo{o.sim_slo_ttft_ms, o.sim_slo_tpot_ms};
  const auto systems = deployments();
  std::cout << "\n## Simulated clock: 7B fp16, four A100-class GPUs\n\n"
            << "Chapter 11's cost model per step; the KV of a prompt token is "
            << systems[1].kv_bytes_per_token / 1024 << " KiB (2 · 32 layers · 4096 · 2 bytes), "
            << "moved at NVLink " << nvlink_link().gbytes_per_s << " GB/s, 200G IB "
            << network_link().gbytes_per_s << " GB/s, 10G Ethernet " << slow_link().gbytes_per_s
            << " GB/s. " << o.sim_requests << " Poisson requests per cell, outputs 64-256 tokens. "
            << "SLO: TTFT <= " << fixed(slo.ttft_ms, 0) << " ms, TPOT <= " << fixed(slo.tpot_ms, 0)
            << " ms.\n\n";
  Table table({"prompt", "rate/s", "system", "TTFT P50 ms", "TTFT P99 ms", "TPOT P50 ms",
               "TPOT P99 ms", "E2E P50 ms", "goodput req/s", "SLO met"});
  Table wins({"prompt", "rate/s", "split system", "winner", "goodput coloc/split",
              "E2E P50 coloc/split ms", "TPOT P99 coloc/split ms"});
  Table curve({"rate", "coloc_tpot_p99", "nvlink_tpot_p99", "slow_tpot_p99", "coloc_goodput",
               "nvlink_goodput", "slow_goodput", "unchunked_tpot_p99", "unchunked_goodput"});
  const int plotted = o.sim_prompts.back();  // the longest: where the split earns its keep
  std::map<std::string, int> colocated_wins, cells;
  std::map<std::tuple<int, std::string, double>, double> tpot_p99;
  // DistServe's capacity: the highest rate served with >= 90% of requests within the SLO.
  std::map<std::pair<int, std::string>, double> capacity;
  for (const int prompt : o.sim_prompts)
    for (const double rate : o.sim_rates) {
      const auto requests = fixed_prompt_workload(o.sim_requests, prompt, 64, 256, rate, o.seed);
      std::vector<serve::ServingSummary> s;
      for (const SimDeployment& d : systems) {
        s.push_back(serve::summarize(simulate_deployment(requests, d).timings, slo));
        const auto& x = s.back();
        double& best = capacity[{prompt, d.name()}];
        if (x.slo_attained >= 0.9) best = std::max(best, rate);
        tpot_p99[{prompt, d.name(), rate}] = x.tpot_p99;
        table.add_row({std::to_string(prompt), fixed(rate, 0), d.name(), fixed(x.ttft_p50, 0),
                       fixed(x.ttft_p99, 0), fixed(x.tpot_p50, 1), fixed(x.tpot_p99, 1),
                       fixed(x.e2e_p50, 0), fixed(x.goodput, 2),
                       fixed(100 * x.slo_attained, 0) + "%"});
      }
      for (std::size_t k = kFirstSplit; k < systems.size(); ++k) {
        const bool c = colocation_wins(s[0], s[k]);
        ++cells[systems[k].name()];
        colocated_wins[systems[k].name()] += c;
        wins.add_row({std::to_string(prompt), fixed(rate, 0), systems[k].name(),
                      c ? "colocated" : "split",
                      fixed(s[0].goodput, 2) + " / " + fixed(s[k].goodput, 2),
                      fixed(s[0].e2e_p50, 0) + " / " + fixed(s[k].e2e_p50, 0),
                      fixed(s[0].tpot_p99, 1) + " / " + fixed(s[k].tpot_p99, 1)});
      }
      if (prompt == plotted)
        curve.add_row({fixed(rate, 1), fixed(s[0].tpot_p99, 2), fixed(s[2].tpot_p99, 2),
                       fixed(s[4].tpot_p99, 2), fixed(s[0].goodput, 3), fixed(s[2].goodput, 3),
                       fixed(s[4].goodput, 3), fixed(s[1].tpot_p99, 2), fixed(s[1].goodput, 3)});
    }
  std::cout << table.markdown() << "\n### Where colocation wins (found by the sweep)\n\n"
            << wins.markdown() << "\n";
  for (const auto& [name, n] : cells)
    std::cout << "4 colocated beats " << name << " in " << colocated_wins[name] << " of " << n
              << " cells\n";
  // The crossovers, printed: per split system and prompt, the highest rate where colocation
  // still wins and the lowest where the split wins.
  std::cout << "\n";
  for (std::size_t k = kFirstSplit; k < systems.size(); ++k)
    for (const int prompt : o.sim_prompts) {
      std::string coloc_rates, split_rates;
      for (const auto& row : wins.rows())
        if (row[0] == std::to_string(prompt) && row[2] == systems[k].name())
          (row[3] == "colocated" ? coloc_rates : split_rates) += " " + row[1];
      std::cout << "prompt " << prompt << ", " << systems[k].name() << ": colocated wins at"
                << (coloc_rates.empty() ? " none" : coloc_rates) << "; split wins at"
                << (split_rates.empty() ? " none" : split_rates) << " (req/s)\n";
      if (o.tour && k == kFirstSplit && prompt == plotted)
        std::cout << "tour: 13 | 7B sim, prompt " << prompt
                  << ": rates where 4 colocated (chunked) beat 2P+2D NVLink |"
                  << (coloc_rates.empty() ? " none" : coloc_rates)
                  << " req/s | colocation wins at low load, short prompts, slow links\n";
    }
  Table cap({"prompt", "system", "max rate at >= 90% SLO, req/s", "per GPU", "TPOT P99 there, ms"});
  for (const int prompt : o.sim_prompts)
    for (const SimDeployment& d : systems) {
      const double c = capacity[{prompt, d.name()}];
      cap.add_row({std::to_string(prompt), d.name(), fixed(c, 0), fixed(c / 4, 1),
                   c > 0 ? fixed(tpot_p99[{prompt, d.name(), c}], 1) : "-"});
    }
  std::cout << "\n### Capacity: the highest swept rate with >= 90% of requests within the SLO "
               "(DistServe's goodput; 0: none)\n\n"
            << cap.markdown();
  cap.write_csv(dir + "/ch13_pd_capacity.csv");
  if (o.tour) {
    const double c = capacity[{plotted, systems[0].name()}];
    std::cout << "tour: 13 | 7B sim, prompt " << plotted
              << ": max rate at >= 90% SLO, 4 colocated chunked / whole prompts / 2P+2D NVLink | "
              << fixed(c, 0) << " / " << fixed(capacity[{plotted, systems[1].name()}], 0) << " / "
              << fixed(capacity[{plotted, systems[2].name()}], 0)
              << " req/s | DistServe: 7.4x more requests within SLO (vs vLLM)\n";
    if (c > 0)
      std::cout << "tour: 13 | 7B sim, prompt " << plotted << " at " << fixed(c, 0)
                << "/s: TPOT P99, 4 colocated chunked vs 2P+2D NVLink | "
                << fixed(tpot_p99[{plotted, systems[0].name(), c}], 1) << " vs "
                << fixed(tpot_p99[{plotted, systems[2].name(), c}], 1)
                << " ms | disaggregation protects P99 TPOT\n";
  }
  table.write_csv(dir + "/ch13_pd_sweep.csv");
  table.write_json(dir + "/ch13_pd_sweep.json");
  wins.write_csv(dir + "/ch13_pd_wins.csv");
  const std::string csv = dir + "/ch13_pd_vs_rate.csv";
  curve.write_csv(csv);
  std::cout << "\nwrote " << plot(csv, dir, plotted) << "\n";
}

}  // namespace book::pd::stage
