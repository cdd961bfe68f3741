/// @file
/// The speculative stage's three measurements (see speculative_main.cc): the trained pair on the
/// addition task (equality, acceptance, wall clock), the step costs of a memory-bound random
/// target on the wall clock, and the 7B/68M sweep on chapter 11's simulated clock.
#pragma once

#include <string>
#include <vector>

#include "chapters/11_continuous_batching/simulate.h"
#include "common/table.h"

namespace book::spec {

/// What the trained pair measured at one gamma.
struct PairRow {
  std::string draft;           ///< which draft
  int gamma = 0;               ///< draft tokens per round
  int mismatches = 0;          ///< requests whose output differs from the target's greedy
  double acceptance = 0;       ///< accepted / proposed
  double tokens_per_pass = 0;  ///< new tokens after the first / target passes
  double plain_ms = 0;         ///< wall clock, all requests, target alone
  double spec_ms = 0;          ///< wall clock, all requests, speculative
};

/// The trained pair: `requests` held-out sums answered greedily by the target alone and
/// speculatively for each gamma. Prints the bytes the draft adds. Paths are runfiles.
std::vector<PairRow> run_trained_pair(const std::string& target_path, const std::string& draft_path,
                                      int requests, const std::vector<int>& gammas, Table& table);

/// Wall-clock step times of a random-weight target and a small random draft, per batch size.
struct StepCosts {
  std::vector<int> batches;                    ///< batch sizes timed
  std::vector<int> gammas;                     ///< draft lengths timed (γ + 1 rows per sequence)
  std::vector<std::vector<double>> target_ms;  ///< [batch][0: one row, 1 + g: gamma_g + 1 rows]
  std::vector<double> draft_ms;                ///< [batch], one row per sequence
  double target_bytes = 0;                     ///< the target's weights
  double draft_bytes = 0;                      ///< the draft's weights
};

/// Times the steps of a random-weight target of `target_layers` × `target_width` (big enough to
/// be memory-bound) and of a 1-layer, 256-wide draft: every batch size with 1 and γ + 1 rows per
/// sequence, medians of `repeats` interleaved rounds. The speed-up is then modelled as
/// E(alpha, gamma) · T_target(b, 1) / (gamma · T_draft(b) + T_target(b, gamma + 1)).
StepCosts measure_step_costs(int target_layers, int target_width, const std::vector<int>& batches,
                             const std::vector<int>& gammas, int repeats);

/// Real batched speculation on the random pair of measure_step_costs (same shapes and seeds):
/// `batches` of random 8-token prompts decoded to `new_tokens` by chapter 10's generate_paged
/// (plain) and by SpeculativeDecoder::generate_batch at `gamma`, on the wall clock, outputs
/// checked equal; alpha is whatever these random models agree on, and the last column is the
/// step-cost model's speed-up at the measured tokens per pass, for comparison. Throws book::Error
/// if an output differs.
Table run_random_batches(int target_layers, int target_width, const std::vector<int>& batches,
                         int gamma, int new_tokens, const StepCosts& costs);

/// Chapter 11's continuous batching with and without speculation on the random pair of
/// measure_step_costs: per concurrency c, 2c random 8-token prompts decoded to `new_tokens` by
/// chapter 11's Engine and by SpecEngine at `gamma` (max_running c, the same token budget
/// c · (γ + 1) for both), on the wall clock, outputs checked equal: tokens/s, the speed-up, alpha,
/// target steps. Throws book::Error if an output differs.
Table run_engine_concurrency(int target_layers, int target_width,
                             const std::vector<int>& concurrencies, int gamma, int new_tokens);

/// The speed-up table from measured step costs at acceptance alpha; `crossings` gets one line
/// per gamma naming the first batch whose speed-up is below 1.
Table wallclock_speedups(const StepCosts& costs, double alpha, std::vector<std::string>& crossings);

/// The simulated clock: a 7B target (chapter 11's CostModel defaults) and a 68M draft whose step
/// costs `draft_step_ms` (small models are launch-bound, not bandwidth-bound), every sequence
/// with `context` cached positions. Speed-up of tokens/s vs batch size per gamma.
Table simulated_speedups(const serve::CostModel& target, const serve::CostModel& draft,
                         const std::vector<int>& batches, const std::vector<int>& gammas,
                         double alpha, int context, std::vector<std::string>& crossings,
                         const std::string& plot_stem);

/// The simulated clock vs output length at batch 1: prefill of `prompt` tokens (the draft's too),
/// then rounds with gamma clamped near the end, by Monte Carlo with a fixed seed.
Table simulated_by_length(const serve::CostModel& target, const serve::CostModel& draft,
                          const std::vector<int>& lengths, int gamma, double alpha, int prompt);

}  // namespace book::spec
