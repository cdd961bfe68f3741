/// @file
/// Cutting the model's layers into stages. The slowest stage sets the pipeline's pace (every
/// micro-batch waits for it), so the best contiguous split minimises the largest stage cost —
/// the linear-partition problem, LeetCode 410 ("Split Array Largest Sum", chapter 12's
/// dp.410), with the embedding's cost on the first stage and the loss head's on the last.
#pragma once

#include <span>
#include <vector>

namespace book::pp {

/// A split of n layers into p contiguous stages.
struct Partition {
  /// p + 1 cuts: stage s holds layers [boundaries[s], boundaries[s+1]); boundaries[0] = 0,
  /// boundaries[p] = n, each stage at least one layer.
  std::vector<int> boundaries;
  double largest = 0;  ///< the largest stage cost (embedding and head included)
};

/// The cost of each stage of `boundaries`: its layers' costs, plus `embed_cost` on the first
/// stage and `head_cost` on the last. Throws book::Error if the boundaries are not p + 1
/// increasing cuts from 0 to layer_costs.size().
std::vector<double> stage_costs(std::span<const double> layer_costs,
                                const std::vector<int>& boundaries, double embed_cost = 0,
                                double head_cost = 0);

/// The even split of n layers into `parts` stages (the first n mod parts stages get one more).
/// Throws book::Error if parts < 1 or n < parts ("fewer layers than stages").
std::vector<int> even_boundaries(int layers, int parts);

/// Exercise pp.partition_layers: the contiguous split of layers with costs `layer_costs` into
/// `stages` stages, each at least one layer, that minimises the largest stage cost, where the
/// first stage also pays `embed_cost` and the last `head_cost`. Dynamic programming over
/// (layers used, stages used): best[k][i] = min over j of max(best[k−1][j], cost of layers
/// [j, i)); O(p·n²). Throws book::Error for stages < 1, fewer layers than stages (naming both), a
/// negative or non-finite cost (naming its index), or costs whose sum (with the embedding's and
/// the head's) overflows a double.
/// \exercise{pp.partition_layers}
Partition partition_layers(std::span<const double> layer_costs, int stages, double embed_cost = 0,
                           double head_cost = 0);

}  // namespace book::pp
