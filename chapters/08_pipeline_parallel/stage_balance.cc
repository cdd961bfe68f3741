// The pipeline stage, stage balancing on a real shape: GPT-2 small (12 blocks, h = 768,
// V = 50257, s = 1024). Forward FLOPs per token: a block 24h² (its four weight matrices, 12h²
// parameters, 2 FLOPs each) + 4sh (scores and weighted sum); the LM head 2Vh (as much as 4.5
// blocks); the embedding a lookup.
#include <algorithm>
#include <iostream>
#include <vector>

#include "chapters/08_pipeline_parallel/partition.h"
#include "chapters/08_pipeline_parallel/stage.h"
#include "common/table.h"

namespace book::pp::stage {

std::vector<Balance> run_balance() {
  const double h = 768, V = 50257, s = 1024;
  const std::vector<double> blocks(12, (24 * h * h + 4 * s * h) / 1e6);  // MFLOP per token
  const double head = 2 * V * h / 1e6;
  std::vector<Balance> out;
  Table table({"stages", "even cuts", "largest stage (MFLOP/token)", "balanced cuts",
               "largest stage", "pace gained", "perfect split"});
  for (int p : {2, 4, 6}) {
    Balance b;
    b.stages = p;
    b.even = even_boundaries(12, p);
    const auto costs = stage_costs(blocks, b.even, 0, head);
    b.even_largest = *std::max_element(costs.begin(), costs.end());
    const Partition best = partition_layers(blocks, p, 0, head);
    b.balanced = best.boundaries;
    b.balanced_largest = best.largest;
    b.ideal = (12 * blocks[0] + head) / p;
    table.add_row({std::to_string(b.stages), list(b.even), fixed(b.even_largest, 1),
                   list(b.balanced), fixed(b.balanced_largest, 1),
                   fixed(b.even_largest / b.balanced_largest, 2) + "x", fixed(b.ideal, 1)});
    out.push_back(b);
  }
  std::cout << "\nStage balancing (partition_layers), GPT-2 small: 12 blocks of "
            << fixed(blocks[0], 1) << " MFLOP/token each, the LM head " << fixed(head, 1)
            << " MFLOP/token on the last stage:\n\n"
            << table.markdown();
  table.write_csv(results_dir() + "/ch08_pipeline_balance.csv");
  return out;
}

}  // namespace book::pp::stage
