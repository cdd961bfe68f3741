// Stage costs and the even split (partition_layers itself is an exercise).
#include "chapters/08_pipeline_parallel/partition.h"

#include "common/check.h"

namespace book::pp {

std::vector<double> stage_costs(std::span<const double> layer_costs,
                                const std::vector<int>& boundaries, double embed_cost,
                                double head_cost) {
  const int n = static_cast<int>(layer_costs.size());
  BOOK_CHECK(boundaries.size() >= 2 && boundaries.front() == 0 && boundaries.back() == n,
             "stage_costs: boundaries must run from 0 to " << n << " layers, got "
                                                           << boundaries.size() << " cuts");
  std::vector<double> costs;
  for (std::size_t s = 0; s + 1 < boundaries.size(); ++s) {
    BOOK_CHECK(boundaries[s] < boundaries[s + 1], "stage_costs: stage "
                                                      << s << " is empty (cut " << boundaries[s]
                                                      << " then " << boundaries[s + 1] << ")");
    double c = 0;
    for (int i = boundaries[s]; i < boundaries[s + 1]; ++i) c += layer_costs[i];
    costs.push_back(c);
  }
  costs.front() += embed_cost;
  costs.back() += head_cost;
  return costs;
}

std::vector<int> even_boundaries(int layers, int parts) {
  BOOK_CHECK(parts >= 1, "even_boundaries: stages must be at least 1, got " << parts);
  BOOK_CHECK(layers >= parts, "fewer layers than stages: " << layers << " layers cannot fill "
                                                           << parts
                                                           << " stages (each needs at least one "
                                                              "layer); use more layers or fewer "
                                                              "stages");
  std::vector<int> cuts = {0};
  for (int s = 0; s < parts; ++s)
    cuts.push_back(cuts.back() + layers / parts + (s < layers % parts));
  return cuts;
}

}  // namespace book::pp
