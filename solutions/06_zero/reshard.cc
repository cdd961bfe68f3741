// The reference zero.reshard_checkpoint.
#include "chapters/06_zero/reshard.h"

#include <algorithm>
#include <vector>

#include "common/check.h"

namespace book::zero {

//! [reshard]
void reshard(std::span<const SavedPiece> saved, const NewPieces& mine) {
  const std::size_t n = mine.ranges.size();
  BOOK_CHECK(mine.master.size() == n && mine.m.size() == n && mine.v.size() == n,
             "reshard: " << n << " new pieces but " << mine.master.size() << " master, "
                         << mine.m.size() << " m and " << mine.v.size() << " v spans");
  // A saved span shorter than its range would be read past its end; overlapping saved pieces
  // would count some elements twice and let a missing one pass the `covered` test below.
  std::vector<ddp::FlatRange> by_begin;
  for (std::size_t j = 0; j < saved.size(); ++j) {
    const SavedPiece& p = saved[j];
    BOOK_CHECK(p.range.begin <= p.range.end && p.master.size() == p.range.size() &&
                   p.m.size() == p.range.size() && p.v.size() == p.range.size(),
               "reshard: saved piece " << j << " [" << p.range.begin << ", " << p.range.end
                                       << ") has " << p.master.size() << " master, " << p.m.size()
                                       << " m and " << p.v.size()
                                       << " v elements: each must hold the range's size");
    by_begin.push_back(p.range);
  }
  std::sort(by_begin.begin(), by_begin.end(),
            [](const ddp::FlatRange& a, const ddp::FlatRange& b) { return a.begin < b.begin; });
  for (std::size_t j = 1; j < by_begin.size(); ++j)
    BOOK_CHECK(by_begin[j - 1].end <= by_begin[j].begin,
               "reshard: saved pieces [" << by_begin[j - 1].begin << ", " << by_begin[j - 1].end
                                         << ") and [" << by_begin[j].begin << ", "
                                         << by_begin[j].end
                                         << ") overlap: the checkpoint's shards must not");
  for (std::size_t i = 0; i < n; ++i) {
    const ddp::FlatRange& to = mine.ranges[i];
    BOOK_CHECK(mine.master[i].size() == to.size() && mine.m[i].size() == to.size() &&
                   mine.v[i].size() == to.size(),
               "reshard: new piece " << i << " [" << to.begin << ", " << to.end
                                     << ") needs spans of " << to.size() << " elements");
    std::size_t covered = 0;
    for (const SavedPiece& from : saved) {
      const std::size_t begin = std::max(to.begin, from.range.begin);
      const std::size_t end = std::min(to.end, from.range.end);
      if (begin >= end) continue;
      const std::size_t src = begin - from.range.begin, dst = begin - to.begin, len = end - begin;
      std::copy_n(from.master.begin() + src, len, mine.master[i].begin() + dst);
      std::copy_n(from.m.begin() + src, len, mine.m[i].begin() + dst);
      std::copy_n(from.v.begin() + src, len, mine.v[i].begin() + dst);
      covered += len;
    }
    if (covered == to.size()) continue;  // saved pieces do not overlap: every element once
    // Name the first element no saved piece holds.
    for (std::size_t e = to.begin; e < to.end; ++e) {
      const bool held = std::any_of(saved.begin(), saved.end(), [e](const SavedPiece& p) {
        return p.range.begin <= e && e < p.range.end;
      });
      BOOK_CHECK(held, "reshard: the checkpoint does not hold element "
                           << e << " (new piece " << i << ", [" << to.begin << ", " << to.end
                           << ")): a shard is missing or from another model");
    }
  }
}
//! [reshard]

}  // namespace book::zero
