// The pipeline stage's tour lines, from the sections' results.
#include <algorithm>
#include <iostream>
#include <vector>

#include "chapters/08_pipeline_parallel/stage.h"
#include "common/table.h"

namespace book::pp::stage {

void print_tour(const std::vector<ScheduleRow>& rows, const std::vector<Balance>& balances,
                const ThreeD& three_d) {
  std::cout << "tour: 08 | loss of DP x TP x PP = 2 x 2 x 2 on 8 thread ranks vs one device "
               "(double) | relative deviation "
            << three_d.deviation()
            << " | the three dimensions compose into the same step, grouped by one grid\n";
  auto find = [&](const std::string& n) -> const ScheduleRow& {
    return *std::find_if(rows.begin(), rows.end(),
                         [&](const ScheduleRow& r) { return r.schedule == n; });
  };
  const ScheduleRow &g = find("gpipe"), &f = find("1f1b"), &i = find("interleaved"),
                    &z = find("zb-h1");
  std::cout << "tour: 08 | bubble, 1F1B p=4 m=8 (simulated, unit costs) | " << fixed(f.simulated, 3)
            << " (formula (p-1)/(m+p-1) = " << fixed(f.formula, 3)
            << ") | the bubble is (p-1) slots of m+p-1; more micro-batches shrink it\n";
  std::cout << "tour: 08 | bubble, interleaved v=2 vs 1F1B | " << fixed(i.simulated, 3) << " vs "
            << fixed(f.simulated, 3) << " (messages " << i.messages << " vs " << f.messages
            << ") | interleaving divides the bubble by about v, at v times the messages\n";
  std::cout << "tour: 08 | idle per rank, ZB-H1 vs 1F1B (F = B = W = 1) | " << z.idle_rank0
            << " vs " << f.idle_rank0
            << " | splitting B from W and deferring W removes two thirds of the bubble\n";
  std::cout << "tour: 08 | peak activations on rank 0, GPipe vs 1F1B (m=8, p=4) | "
            << g.executed_peaks[0] << " vs " << f.executed_peaks[0]
            << " | GPipe holds m micro-batches, 1F1B at most p\n";
  const Balance& b4 = balances[1];
  std::cout << "tour: 08 | slowest of 4 stages, GPT-2 small, layers counted vs partition_layers | "
            << fixed(b4.even_largest, 1) << " vs " << fixed(b4.balanced_largest, 1)
            << " MFLOP/token (" << fixed(b4.even_largest / b4.balanced_largest, 2)
            << "x) | weigh the LM head, not the layer count, when cutting stages\n";
  double worst = 0;
  for (const ScheduleRow& r : rows) worst = std::max(worst, r.deviation());
  std::cout << "tour: 08 | loss of a real step on 4 thread ranks vs one device, every schedule | "
            << "relative deviation " << worst
            << " | the pipeline computes the same step, not an approximation\n";
}

}  // namespace book::pp::stage
