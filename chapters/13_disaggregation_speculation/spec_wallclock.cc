// The speculative stage's wall-clock part: step times of a memory-bound random target and a small
// random draft, the speed-up modelled from them, and the same pair decoding batches for real.
#include <algorithm>

#include "chapters/04_training_baseline/config.h"
#include "chapters/10_paged_attention/decoding.h"
#include "chapters/10_paged_attention/served_model.h"
#include "chapters/13_disaggregation_speculation/spec_decoder.h"
#include "chapters/13_disaggregation_speculation/spec_report.h"
#include "chapters/13_disaggregation_speculation/speculative.h"
#include "common/check.h"
#include "common/rng.h"
#include "common/timer.h"

namespace book::spec {

namespace {

// One step of `b` sequences with `rows` new tokens each, at position 0, ready to time.
struct StepCase {
  ModelStack* stack;
  std::vector<int> tokens;
  std::vector<std::vector<kv::BlockId>> tables;
  std::vector<kv::SequenceChunk> chunks;
  std::vector<double> ms;
  StepCase(ModelStack& s, int b, int rows) : stack(&s), tokens(rows, 3), tables(b) {
    for (int i = 0; i < b; ++i) tables[i] = {i};
  }
  void run() {
    chunks.clear();
    for (const auto& table : tables) chunks.push_back({tokens, 0, table});
    stack->runner->run(chunks);
  }
};

}  // namespace

namespace {

// The random-weight pair of the wall-clock measurements.
std::pair<train::Config, train::Config> random_pair(int target_layers, int target_width) {
  train::Config tc;
  tc.vocab_size = 512, tc.context = 64, tc.n_layer = target_layers, tc.d_model = target_width;
  tc.n_head = std::max(1, target_width / 64);
  train::Config dc = tc;
  dc.n_layer = 1, dc.d_model = 256, dc.n_head = 4;
  return {tc, dc};
}

}  // namespace

Table run_random_batches(int target_layers, int target_width, const std::vector<int>& batches,
                         int gamma, int new_tokens, const StepCosts& costs) {
  const auto [tc, dc] = random_pair(target_layers, target_width);
  const int max_b = *std::max_element(batches.begin(), batches.end());
  const int blocks = max_b * ((8 + new_tokens + gamma) / 16 + 2);
  // Room for a whole batch's verification in one step, as in measure_step_costs.
  const int rows = std::max(64, max_b * (gamma + 1));
  auto target = make_stack(kv::random_model(tc, 7), blocks, 16, rows);
  auto draft = make_stack(kv::random_model(dc, 8), blocks, 16, rows);
  Table table({"batch", "plain ms", "speculative ms", "speed-up", "alpha", "tokens per pass",
               "step-cost model at these tokens/pass"});
  Rng rng(99);
  for (const int b : batches) {
    std::vector<std::vector<int>> prompts(b, std::vector<int>(8));
    for (auto& prompt : prompts)
      for (int& t : prompt) t = static_cast<int>(rng.uniform() * tc.vocab_size);
    Timer plain_timer;
    const auto plain = kv::generate_paged(*target.runner, *target.blocks, prompts, new_tokens, 0);
    const double plain_ms = plain_timer.seconds() * 1e3;
    SpeculativeDecoder decoder(target.served(), draft.served(), {.gamma = gamma});
    Timer spec_timer;
    const auto spec = decoder.generate_batch(prompts, new_tokens, 0);
    const double spec_ms = spec_timer.seconds() * 1e3;
    SpecResult total;
    std::int64_t tokens = 0;
    for (std::size_t i = 0; i < spec.size(); ++i) {
      BOOK_CHECK(spec[i].tokens == plain[i], "speculative output differs from the target's");
      total.proposed += spec[i].proposed, total.accepted += spec[i].accepted;
      total.target_passes += spec[i].target_passes;
      tokens += static_cast<std::int64_t>(spec[i].tokens.size()) - 1;
    }
    const double alpha = total.acceptance();
    const double tokens_per_pass =
        static_cast<double>(tokens) / static_cast<double>(total.target_passes);
    std::string model = "-";
    const auto bi = std::find(costs.batches.begin(), costs.batches.end(), b);
    const auto gi = std::find(costs.gammas.begin(), costs.gammas.end(), gamma);
    if (bi != costs.batches.end() && gi != costs.gammas.end()) {
      const auto r = static_cast<std::size_t>(bi - costs.batches.begin());
      const auto g = static_cast<std::size_t>(gi - costs.gammas.begin());
      // Measured tokens per pass, not E(alpha): these models' agreements come in runs, so
      // acceptances are not independent and the formula undercounts.
      model = fixed(tokens_per_pass * costs.target_ms[r][0] /
                        (gamma * costs.draft_ms[r] + costs.target_ms[r][g + 1]),
                    2) +
              "x";
    }
    table.add_row({std::to_string(b), fixed(plain_ms, 0), fixed(spec_ms, 0),
                   fixed(plain_ms / spec_ms, 2) + "x", fixed(alpha, 2), fixed(tokens_per_pass, 2),
                   model});
  }
  return table;
}

StepCosts measure_step_costs(int target_layers, int target_width, const std::vector<int>& batches,
                             const std::vector<int>& gammas, int repeats) {
  const auto [tc, dc] = random_pair(target_layers, target_width);
  const int max_b = *std::max_element(batches.begin(), batches.end());
  const int max_g = *std::max_element(gammas.begin(), gammas.end());
  BOOK_CHECK(max_g + 1 <= 16, "measure_step_costs: gamma up to 15 (one block of 16 per sequence)");
  auto target = make_stack(kv::random_model(tc, 7), max_b, 16, max_b * (max_g + 1));
  auto draft = make_stack(kv::random_model(dc, 8), max_b, 16, max_b);
  StepCosts costs;
  costs.batches = batches;
  costs.gammas = gammas;
  costs.target_bytes = 4.0 * static_cast<double>(tc.parameter_count());
  costs.draft_bytes = 4.0 * static_cast<double>(dc.parameter_count());
  // Every case once per round, rounds repeated, medians kept: on a shared machine a burst of
  // other work then spreads over all cases instead of landing on one.
  std::vector<StepCase> cases;
  for (const int b : batches) {
    cases.emplace_back(target, b, 1);
    for (const int g : gammas) cases.emplace_back(target, b, g + 1);
    cases.emplace_back(draft, b, 1);
  }
  for (StepCase& c : cases) c.run();  // warm-up
  for (int r = 0; r < repeats; ++r)
    for (StepCase& c : cases) {
      Timer timer;
      c.run();
      c.ms.push_back(timer.seconds() * 1e3);
    }
  std::size_t k = 0;
  for (std::size_t i = 0; i < batches.size(); ++i) {
    std::vector<double> row;
    for (std::size_t j = 0; j <= gammas.size(); ++j) row.push_back(median(cases[k++].ms));
    costs.target_ms.push_back(row);
    costs.draft_ms.push_back(median(cases[k++].ms));
  }
  return costs;
}

Table wallclock_speedups(const StepCosts& costs, double alpha,
                         std::vector<std::string>& crossings) {
  std::vector<std::string> columns{"batch", "target 1 row/seq ms", "draft ms"};
  for (const int g : costs.gammas) columns.push_back("gamma " + std::to_string(g));
  Table table(columns);
  std::vector<int> first_loss(costs.gammas.size(), 0);
  for (std::size_t i = 0; i < costs.batches.size(); ++i) {
    std::vector<std::string> cells{std::to_string(costs.batches[i]),
                                   fixed(costs.target_ms[i][0], 1), fixed(costs.draft_ms[i], 2)};
    for (std::size_t j = 0; j < costs.gammas.size(); ++j) {
      const int g = costs.gammas[j];
      const double speedup = expected_tokens(alpha, g) * costs.target_ms[i][0] /
                             (g * costs.draft_ms[i] + costs.target_ms[i][j + 1]);
      if (speedup < 1 && first_loss[j] == 0) first_loss[j] = costs.batches[i];
      cells.push_back(fixed(speedup, 2) + "x");
    }
    table.add_row(cells);
  }
  for (std::size_t j = 0; j < costs.gammas.size(); ++j)
    crossings.push_back("gamma " + std::to_string(costs.gammas[j]) + ": " +
                        (first_loss[j]
                             ? "below 1.0x from batch " + std::to_string(first_loss[j])
                             : "above 1.0x up to batch " + std::to_string(costs.batches.back())));
  return table;
}
}  // namespace book::spec
