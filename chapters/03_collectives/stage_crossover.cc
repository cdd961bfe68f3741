// The busbw stage's section "Tree and naive: latency against bandwidth": where the ring starts to
// beat the tree on this machine.
#include <cstdio>

#include "chapters/03_collectives/busbw_table.h"
#include "chapters/03_collectives/stage.h"

namespace book::coll::stage {

TourLines crossover_section(const StageOptions& options, const Measurements& measured) {
  // The smallest size from which the ring beats the tree at every larger size too (so one noisy
  // point does not move it).
  std::size_t crossover = 0;
  for (auto it = measured.busbw.rbegin(); it != measured.busbw.rend(); ++it) {
    const auto& by_algorithm = it->second;
    if (!by_algorithm.count("tree")) continue;
    if (by_algorithm.at("ring") <= by_algorithm.at("tree")) break;
    crossover = it->first;
  }
  if (crossover)
    std::printf("tree/ring crossover: the ring is faster from %s on (at every larger size too)\n",
                format_bytes(crossover).c_str());
  else
    std::printf("tree/ring crossover: the tree was faster at every size measured\n");
  return "tour: 03 | tree/ring all-reduce crossover (N=" + std::to_string(options.ranks) +
         " threads) | " +
         (crossover ? "ring faster from " + format_bytes(crossover) : "tree faster at all sizes") +
         " | trees win small (latency), rings win large (bandwidth)\n";
}

}  // namespace book::coll::stage
