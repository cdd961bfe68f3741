// The busbw stage's section "The exact volume": the bytes one rank sends in a ring all-reduce,
// counted by the communicator, against 2(N-1)/N of the message.
#include <cstdint>
#include <cstdio>

#include "chapters/03_collectives/stage.h"
#include "chapters/03_collectives/threads.h"

namespace book::coll::stage {

TourLines volume_section(const StageOptions& options) {
  const std::size_t bytes = 1u << 20;
  std::uint64_t sent = 0;
  run_ranks(options.ranks, [&](Communicator& comm) {
    std::vector<float> data(bytes / sizeof(float), 1.0f);
    comm.all_reduce(std::span<float>(data), ReduceOp::kSum, Algorithm::kRing);
    if (comm.rank() == 1) sent = comm.counters().bytes_sent;
  });
  char line[256];
  std::snprintf(line, sizeof line,
                "tour: 03 | ring all-reduce bytes sent per rank (N=%d, 1 MiB) | %.2f MiB = "
                "2(N-1)/N·S | 2(N-1)/N·S\n",
                options.ranks, static_cast<double>(sent) / (1u << 20));
  return line;
}

}  // namespace book::coll::stage
