// A stage's bytes under 1F1B, and chapter 8's partition with a memory limit.
#include "chapters/15_production_training/stage_memory.h"

#include <algorithm>
#include <limits>

#include "common/check.h"

namespace book::prod {

std::vector<double> stage_bytes(const StageMemory& m, const std::vector<int>& boundaries) {
  BOOK_CHECK(m.layer_state_bytes.size() == m.layer_activation_bytes.size(),
             "stage_bytes: " << m.layer_state_bytes.size() << " layers of state but "
                             << m.layer_activation_bytes.size() << " of activations");
  const std::vector<double> states = pp::stage_costs(m.layer_state_bytes, boundaries);
  const std::vector<double> acts = pp::stage_costs(m.layer_activation_bytes, boundaries);
  const int p = static_cast<int>(states.size());
  std::vector<double> bytes(p);
  for (int s = 0; s < p; ++s) bytes[s] = m.fixed_bytes + states[s] + (p - s) * acts[s];
  bytes.front() += m.first_bytes;
  bytes.back() += m.last_bytes;
  return bytes;
}

std::optional<pp::Partition> partition_within_memory(std::span<const double> costs, int stages,
                                                     double embed_cost, double head_cost,
                                                     const StageMemory& memory) {
  const int n = static_cast<int>(costs.size());
  BOOK_CHECK(memory.layer_state_bytes.size() == costs.size() &&
                 memory.layer_activation_bytes.size() == costs.size(),
             "partition_within_memory: " << n << " layer costs but "
                                         << memory.layer_state_bytes.size() << " states and "
                                         << memory.layer_activation_bytes.size()
                                         << " activations; give one of each per layer");
  // partition_layers' own checks (stages, layer count, costs), and its answer: when it fits, no
  // split with a smaller slowest stage exists, fitting or not.
  const pp::Partition free = pp::partition_layers(costs, stages, embed_cost, head_cost);
  const auto fits = [&](const std::vector<int>& cuts) {
    for (double b : stage_bytes(memory, cuts))
      if (b > memory.limit) return false;
    return true;
  };
  if (fits(free.boundaries)) return free;
  std::vector<double> cost(n + 1, 0), state(n + 1, 0), act(n + 1, 0);
  for (int i = 0; i < n; ++i) {
    cost[i + 1] = cost[i] + costs[i];
    state[i + 1] = state[i] + memory.layer_state_bytes[i];
    act[i + 1] = act[i] + memory.layer_activation_bytes[i];
  }
  // Stage k (0-based) holding layers [j, i): its bytes under 1F1B, p − k micro-batches in flight.
  const auto bytes = [&](int k, int j, int i) {
    double b = memory.fixed_bytes + state[i] - state[j] + (stages - k) * (act[i] - act[j]);
    if (k == 0) b += memory.first_bytes;
    if (k == stages - 1) b += memory.last_bytes;
    return b;
  };
  const auto stage_cost = [&](int k, int j, int i) {
    return cost[i] - cost[j] + (k == 0 ? embed_cost : 0) + (k == stages - 1 ? head_cost : 0);
  };
  const double inf = std::numeric_limits<double>::infinity();
  // best[k][i]: the smallest slowest stage of layers [0, i) in stages 0..k, each fitting.
  std::vector<std::vector<double>> best(stages, std::vector<double>(n + 1, inf));
  std::vector<std::vector<int>> from(stages, std::vector<int>(n + 1, -1));
  for (int i = 1; i <= n; ++i)
    if (bytes(0, 0, i) <= memory.limit) best[0][i] = stage_cost(0, 0, i);
  for (int k = 1; k < stages; ++k)
    for (int i = k + 1; i <= n; ++i)
      for (int j = k; j < i; ++j) {
        if (best[k - 1][j] == inf || bytes(k, j, i) > memory.limit) continue;
        const double candidate = std::max(best[k - 1][j], stage_cost(k, j, i));
        if (candidate < best[k][i]) best[k][i] = candidate, from[k][i] = j;
      }
  if (best[stages - 1][n] == inf) return std::nullopt;
  pp::Partition result;
  result.boundaries.assign(stages + 1, 0);
  result.boundaries[stages] = n;
  for (int k = stages - 1, i = n; k > 0; --k) i = result.boundaries[k] = from[k][i];
  result.largest = best[stages - 1][n];
  return result;
}

}  // namespace book::prod
