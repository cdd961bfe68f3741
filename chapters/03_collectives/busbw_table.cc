#include "chapters/03_collectives/busbw_table.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "common/buffer.h"
#include "common/check.h"
#include "common/timer.h"

namespace book::coll {

double algbw_gbs(std::size_t bytes, double seconds) {
  return static_cast<double>(bytes) / seconds * 1e-9;
}

double all_reduce_bus_factor(int ranks) { return 2.0 * (ranks - 1) / ranks; }

std::string format_bytes(std::size_t bytes) {
  char text[32];
  if (bytes >= (1u << 20) && bytes % (1u << 20) == 0)
    std::snprintf(text, sizeof text, "%zu MiB", bytes >> 20);
  else if (bytes >= 1024 && bytes % 1024 == 0)
    std::snprintf(text, sizeof text, "%zu KiB", bytes >> 10);
  else
    std::snprintf(text, sizeof text, "%zu B", bytes);
  return text;
}

std::vector<std::size_t> size_sweep(std::size_t min_bytes, std::size_t max_bytes, int step) {
  BOOK_CHECK(min_bytes >= 1 && step >= 2,
             "size_sweep needs a first size of at least 1 byte and a step of at least 2, got "
                 << min_bytes << " and " << step);
  BOOK_CHECK(min_bytes <= max_bytes && max_bytes <= kMaxSweepBytes,
             "size_sweep: the largest size must be between the first ("
                 << min_bytes << " bytes) and " << (kMaxSweepBytes >> 30) << " GiB, got "
                 << max_bytes << " bytes");
  std::vector<std::size_t> sizes;
  const auto factor = static_cast<std::size_t>(step);
  for (std::size_t s = min_bytes;; s *= factor) {  // no overflow: s ≤ max_bytes ≤ 2^40 here
    sizes.push_back(s);
    if (s > max_bytes / factor) break;
  }
  return sizes;
}

int repetitions_for(std::size_t bytes, std::size_t budget_bytes) {
  return static_cast<int>(
      std::clamp<std::size_t>(budget_bytes / std::max<std::size_t>(bytes, 1), 1, 200));
}

double memcpy_gbs(std::size_t bytes, int repeats) {
  AlignedBuffer<char> from(bytes, 1), to(bytes, 0);
  const double seconds = median_seconds(
      [&] {
        std::memcpy(to.data(), from.data(), bytes);
        from[bytes / 2] = to[bytes / 3];  // keep the copies observable
      },
      repeats);
  return algbw_gbs(bytes, seconds);
}

}  // namespace book::coll
