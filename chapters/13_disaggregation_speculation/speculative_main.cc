// The speculative-decoding stage, three measurements:
//  1. the trained pair (chapter 4's addition model served as in chapter 10, and this chapter's
//     smaller trained draft): greedy speculative output = the target's for every request and
//     gamma, the measured acceptance alpha, tokens per target pass, and the wall clock;
//  2. the wall clock where the target step is memory-bound: a random-weight target larger than
//     the last-level cache and a small random draft, their step times measured per batch size
//     and rows, the speed-up modelled from them at the measured alpha; then the same pair
//     decoding batches for real (plain vs generate_batch), next to the model;
//  3. chapter 11's simulated clock at 7B/68M scale: speed-up vs batch size and vs output length.
// `--tour` runs each quickly. Results: results/ch13_speculative_*.csv, ch13_speculative.png.
#include <iostream>

#include "chapters/10_paged_attention/served_model.h"
#include "chapters/13_disaggregation_speculation/spec_report.h"
#include "chapters/13_disaggregation_speculation/speculative.h"
#include "common/flags.h"
#include "common/machine_load.h"
#include "common/main.h"

namespace {

using namespace book;
using namespace book::spec;

int body(int argc, char** argv) {
  int requests = 300, target_layers = 4, target_width = 1024, repeats = 5, context = 1024;
  double draft_step_ms = 0.5;
  bool tour = false;
  Flags flags("speculative", "speculative decoding: equality, acceptance, and where it loses");
  flags.add("requests", &requests, "held-out sums for the trained pair").range(1, 100000);
  flags.add("target-layers", &target_layers, "layers of the memory-bound random target")
      .range(1, 64);
  flags.add("target-width", &target_width, "d_model of the memory-bound random target (x64)")
      .range(64, 8192);
  flags.add("repeats", &repeats, "timed steps per point (median)").range(1, 100);
  flags.add("context", &context, "cached positions per sequence on the simulated clock")
      .range(1, 1000000);
  flags
      .add("draft-step-ms", &draft_step_ms,
           "the 68M draft's fixed step cost on the simulated "
           "clock (launch-bound, not bandwidth-bound)")
      .range(0.0, 1000.0);
  flags.add("tour", &tour, "the tour's quick run");
  flags.parse(argc, argv);
  print_machine_load();
  if (tour) requests = 60, target_width = 768, repeats = 3;
  const std::string dir = results_dir();

  std::cout << "\n## 1. The trained pair on 2-digit addition (greedy)\n\n";
  Table pair({"draft", "gamma", "outputs != target's", "alpha (accepted/proposed)",
              "tokens per pass", "plain ms", "speculative ms", "speed-up"});
  const auto rows = run_trained_pair(
      kv::runfile("chapters/10_paged_attention/addition_checkpoint.bin", argv[0]),
      kv::runfile("chapters/13_disaggregation_speculation/draft_checkpoint.bin", argv[0]), requests,
      tour ? std::vector<int>{1, 2, 4} : std::vector<int>{1, 2, 3, 4, 5, 6, 7}, pair);
  std::cout << "\n" << pair.markdown();
  pair.write_csv(dir + "/ch13_speculative_pair.csv");
  int mismatches = 0;
  for (const auto& r : rows) mismatches += r.mismatches;
  const double alpha = rows.front().acceptance;
  std::cout << "(" << requests << " held-out sums of 3 answer tokens: a tiny model, so the "
            << "draft's step costs about what the target's does and the wall clock shows it)\n";

  std::cout << "\n## 2. Wall clock, memory-bound target (random weights; timing only)\n\n";
  const std::vector<int> batches =
      tour ? std::vector<int>{1, 4, 16} : std::vector<int>{1, 2, 4, 8, 16, 32, 64};
  const std::vector<int> gammas = tour ? std::vector<int>{2, 4} : std::vector<int>{1, 2, 4, 8};
  const StepCosts costs = measure_step_costs(target_layers, target_width, batches, gammas, repeats);
  std::cout << "target: " << target_layers << " layers, d_model " << target_width << ", "
            << fixed(costs.target_bytes / 1e6, 0)
            << " MB of weights (more than the LLC); draft: " << fixed(costs.draft_bytes / 1e6, 1)
            << " MB\n";
  for (const double a : {alpha, 0.6}) {
    std::vector<std::string> crossings;
    const Table t = wallclock_speedups(costs, a, crossings);
    std::cout
        << "\nspeed-up at alpha = " << fixed(a, 2)
        << " (E(alpha, gamma) x T_target(b, 1) / (gamma x T_draft(b) + T_target(b, gamma+1))):\n"
        << t.markdown();
    for (const auto& c : crossings) std::cout << "crossing, " << c << "\n";
    if (a == alpha) t.write_csv(dir + "/ch13_speculative_wallclock.csv");
  }

  std::cout << "\nreal batched speculation on the same random pair, gamma 4, 24 new tokens (random "
               "models agree on whatever they agree on: alpha below is theirs, not a trained "
               "draft's):\n"
            << "";
  const Table real = run_random_batches(target_layers, target_width, batches, 4, 24, costs);
  std::cout << real.markdown();
  real.write_csv(dir + "/ch13_speculative_batched.csv");

  const int engine_tokens = tour ? 12 : 24;
  std::cout << "\ncontinuous batching with and without speculation (chapter 11's Engine vs "
               "SpecEngine, the same random pair, gamma 4, "
            << engine_tokens
            << " new tokens, 2 x concurrency "
               "requests, the same token budget; the proposals count against it):\n";
  const Table engine = run_engine_concurrency(
      target_layers, target_width,
      tour ? std::vector<int>{1, 4, 16} : std::vector<int>{1, 2, 4, 8, 16, 32}, 4, engine_tokens);
  std::cout << engine.markdown();
  engine.write_csv(dir + "/ch13_speculative_engine.csv");

  std::cout << "\n## 3. Simulated clock: 7B target, 68M draft (chapter 11's CostModel)\n\n";
  const serve::CostModel target;  // 7B fp16 on an A100-class GPU
  serve::CostModel draft;
  const double scale = 68.0 / 7000.0;  // parameters, and roughly KV bytes per token
  draft.step_ms = draft_step_ms;
  draft.per_token_ms = target.per_token_ms * scale;
  draft.per_context_ms = target.per_context_ms * 0.012;  // 2 layers x 768 vs 32 x 4096
  draft.per_pair_ms = target.per_pair_ms * 0.047;
  const std::vector<int> sim_batches{1, 2, 4, 8, 16, 32, 64, 128, 256, 512};
  const std::vector<int> sim_gammas{1, 2, 4, 8};
  std::string first_loss = "none";
  struct Case {
    double alpha;
    int context;
  };
  for (const Case k :
       {Case{alpha, context}, Case{0.7, context}, Case{0.5, context}, Case{0.7, 128}}) {
    std::vector<std::string> crossings;
    const bool main_case = k.alpha == 0.7 && k.context == context;
    const Table t =
        simulated_speedups(target, draft, sim_batches, sim_gammas, k.alpha, k.context, crossings,
                           k.context == 128 ? dir + "/ch13_speculative" : "");
    std::cout << "\nalpha = " << fixed(k.alpha, 2) << ", " << k.context
              << " cached positions per sequence:\n"
              << t.markdown();
    for (const auto& c : crossings) {
      std::cout << "crossing, " << c << "\n";
      if (first_loss == "none" && c.find("below") != std::string::npos)
        first_loss =
            "alpha " + fixed(k.alpha, 1) + ", context " + std::to_string(k.context) + ", " + c;
    }
    if (main_case) t.write_csv(dir + "/ch13_speculative_simulated.csv");
  }
  std::cout << "\nby output length at batch 1, gamma 4, alpha 0.7, prompt 512:\n"
            << simulated_by_length(target, draft, {2, 4, 8, 16, 64, 256}, 4, 0.7, 512).markdown();
  std::cout << "draft's cost on the simulated clock: +68M x 2 bytes = 136 MB of weights (+1% of "
               "14 GB) and +1.2% KV bytes per token\n";

  if (tour) {
    std::cout << "tour-config: 13 | speculative --tour: " << requests
              << " sums with the trained and the self draft at gamma 1, 2, 4; a " << target_width
              << "-wide random target timed at batch 1, 4, 16; the 7B/68M simulation in full "
                 "(the full run: 300 sums, gamma 1..7, width 1024, batch 1..64)\n";
    std::cout << "tour: 13 | greedy speculative outputs != target's (" << requests << " sums x "
              << rows.size() << " (draft, gamma) pairs) | " << mismatches
              << " | the greedy rule reproduces the target exactly\n";
    std::cout << "tour: 13 | measured acceptance alpha, trained 1-layer draft | " << fixed(alpha, 2)
              << " | tokens/pass = (1 - a^(g+1))/(1 - a)\n";
    std::cout << "tour: 13 | measured acceptance alpha, self-draft (target's layer 1 + head) | "
              << fixed(rows.back().acceptance, 2)
              << " | an early exit without training: a poor draft costs time, never quality\n";
    std::cout << "tour: 13 | real batched speculation, random " << target_width
              << "-wide pair, gamma 4: batch " << real.rows().front()[0] << " vs batch "
              << real.rows().back()[0] << " | " << real.rows().front()[3] << " vs "
              << real.rows().back()[3] << " | speculation fades as concurrency grows\n";
    std::cout << "tour: 13 | continuous batching + speculation, gamma 4: concurrency "
              << engine.rows().front()[0] << " vs " << engine.rows().back()[0] << " | "
              << engine.rows().front()[4] << " vs " << engine.rows().back()[4]
              << " | proposals share the step's token budget with everyone else\n";
    std::cout << "tour: 13 | simulated 7B/68M: first speed-up below 1.0x in the sweep | "
              << first_loss << " | 2-3x at batch 1 (Leviathan), a loss at high concurrency\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return book::run_main(argc, argv, body); }
