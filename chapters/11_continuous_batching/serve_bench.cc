// bazel run -c opt //chapters/11_continuous_batching:serve_bench [-- --tour] [--requests N]
//     [--rate R] [--gamma-shape K] [--seed N] [--max-batch N] [--token-budget N] [--kv-blocks N]
//     [--slo-ttft-ms T] [--slo-tpot-ms T]
//     [--wall-clock [--wall-requests N] [--wall-reps N] [--wall-threads N]]
//     (--help lists them)
//
// Continuous batching measured on a simulated clock: the real scheduler (the exercises, on
// chapter 10's BlockManager) decides every step of a seeded long-tailed workload, and a per-step
// cost model of a 7B fp16 model on one A100-class GPU says how long each step took (simulate.h).
// Prints, one README section after another (stage.h lists them): static batching and one at a
// time against continuous batching (offline capacity and online latency), the sweep of max batch
// × token budget (throughput against P99), the two P99 fixes (an SLO-driven token budget;
// fast/slow lanes), the latency-vs-rate curve, the trained model through the engine, and with
// --wall-clock the real engine timed; then the tour lines. CSV/JSON and two pictures go under
// results/.
#include <iostream>
#include <string>

#include "chapters/10_paged_attention/served_model.h"
#include "chapters/11_continuous_batching/stage.h"
#include "common/machine_load.h"
#include "common/main.h"
#include "common/table.h"

namespace {

using namespace book;
using namespace book::serve;
using namespace book::serve::stage;

// The run's setting: the cost model of a step and the SLO.
void print_header(const StageOptions& o) {
  const CostModel cost;
  const Slo slo = stage_slo(o);
  std::cout << "# Chapter 11: continuous batching\n\n"
            << "Simulated clock: the real scheduler on chapter 10's BlockManager decides every "
               "step; a step of r new tokens whose sequences hold c positions costs "
            << fixed(cost.step_ms, 1) << " + " << fixed(cost.per_token_ms, 3) << "·r + "
            << fixed(cost.per_context_ms * 1000, 2) << "e-3·c + "
            << fixed(cost.per_pair_ms * 1e6, 0)
            << "e-6·q ms for q (query, key) pairs (a 7B fp16 model on one A100-class GPU; a cost "
               "model, not a measurement). SLO: TTFT <= "
            << fixed(slo.ttft_ms, 0) << " ms and TPOT <= " << fixed(slo.tpot_ms, 0) << " ms.\n\n";
}

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
  print_header(o);
  const Peers peers = peers_section(o);
  const TourLines sweep = sweep_section(o);
  const TourLines fixes = fixes_section(o);
  rates_section(o, peers);
  const TourLines engine = engine_section(o);
  if (o.wall_clock) wall_clock_section(o);
  std::cout << peers.tour << sweep << fixes << engine;
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return book::run_main(argc, argv, body); }
