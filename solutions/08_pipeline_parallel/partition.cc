// Reference body of pp.partition_layers: the linear-partition DP.
#include "chapters/08_pipeline_parallel/partition.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/check.h"

namespace book::pp {

//! [partition_layers]
Partition partition_layers(std::span<const double> layer_costs, int stages, double embed_cost,
                           double head_cost) {
  const int n = static_cast<int>(layer_costs.size());
  BOOK_CHECK(stages >= 1, "partition_layers: stages must be at least 1, got " << stages);
  BOOK_CHECK(n >= stages, "partition_layers: fewer layers than stages: " << n << " layers, "
                                                                         << stages << " stages");
  for (int i = 0; i < n; ++i)
    BOOK_CHECK(std::isfinite(layer_costs[i]) && layer_costs[i] >= 0,
               "partition_layers: layer " << i << " has cost " << layer_costs[i]
                                          << "; costs must be finite and non-negative");
  BOOK_CHECK(
      std::isfinite(embed_cost) && embed_cost >= 0 && std::isfinite(head_cost) && head_cost >= 0,
      "partition_layers: embedding cost " << embed_cost << " and head cost " << head_cost
                                          << " must be finite and non-negative");
  std::vector<double> prefix(n + 1, 0);
  for (int i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + layer_costs[i];
  BOOK_CHECK(std::isfinite(prefix[n] + embed_cost + head_cost),
             "partition_layers: the costs sum to more than a double holds; scale them down");
  const double inf = std::numeric_limits<double>::infinity();
  // best[k][i]: the smallest largest cost of layers [0, i) in k stages; from[k][i]: its last cut.
  std::vector<std::vector<double>> best(stages + 1, std::vector<double>(n + 1, inf));
  std::vector<std::vector<int>> from(stages + 1, std::vector<int>(n + 1, -1));
  for (int i = 1; i <= n; ++i) best[1][i] = embed_cost + prefix[i];
  for (int k = 2; k <= stages; ++k)
    for (int i = k; i <= n; ++i)
      for (int j = k - 1; j < i; ++j) {
        const double last = prefix[i] - prefix[j] + (k == stages && i == n ? head_cost : 0);
        const double candidate = std::max(best[k - 1][j], last);
        if (candidate < best[k][i]) best[k][i] = candidate, from[k][i] = j;
      }
  Partition result;
  result.boundaries.assign(stages + 1, 0);
  result.boundaries[stages] = n;
  for (int k = stages, i = n; k > 1; --k) i = result.boundaries[k - 1] = from[k][i];
  result.largest = stages == 1 ? embed_cost + prefix[n] + head_cost : best[stages][n];
  return result;
}
//! [partition_layers]

}  // namespace book::pp
