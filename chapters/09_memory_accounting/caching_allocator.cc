// PyTorch's caching allocator, simulated; see caching_allocator.h.
#include "chapters/09_memory_accounting/caching_allocator.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <tuple>

#include "common/check.h"

namespace book::mem {
namespace {

constexpr int kOffsetBits = 40;  // an address is (segment + 1) << 40 | offset
constexpr std::uint64_t kOffsetMask = (std::uint64_t{1} << kOffsetBits) - 1;

std::size_t round_up(std::size_t n, std::size_t unit) { return (n + unit - 1) / unit * unit; }

}  // namespace

CachingAllocator::CachingAllocator(AllocatorOptions options) : options_(options) {}

std::uint64_t CachingAllocator::address_of(std::size_t segment, std::size_t offset) {
  return (static_cast<std::uint64_t>(segment) + 1) << kOffsetBits | offset;
}

std::size_t CachingAllocator::segments() const {
  return static_cast<std::size_t>(std::count_if(segments_.begin(), segments_.end(),
                                                [](const Segment& s) { return s.size > 0; }));
}

//! [grow]
std::size_t CachingAllocator::grow(bool small, std::size_t size) {
  ++device_calls_;
  if (!options_.expandable_segments) {
    // A new segment: 2 MiB for the small pool; 20 MiB for a large request under 10 MiB (room for
    // its neighbours); else the request rounded up to 2 MiB.
    Segment s;
    s.small = small;
    s.size =
        small ? kSmallBuffer : (size < kMinLargeAlloc ? kLargeBuffer : round_up(size, kRoundLarge));
    s.blocks[0] = Block{s.size, 0, false};
    bytes_.reserved += s.size;
    segments_.push_back(std::move(s));
    return segments_.size() - 1;
  }
  // Expandable: the pool's one segment maps just enough 2 MiB pages at its end.
  auto it = std::find_if(segments_.begin(), segments_.end(),
                         [&](const Segment& s) { return s.small == small; });
  if (it == segments_.end()) {
    segments_.push_back(Segment{small, 0, {}});
    it = std::prev(segments_.end());
  }
  Segment& s = *it;
  const bool last_free = !s.blocks.empty() && !std::prev(s.blocks.end())->second.live;
  const std::size_t have = last_free ? std::prev(s.blocks.end())->second.size : 0;
  const std::size_t pages = round_up(size - have, kRoundLarge);
  if (last_free)
    std::prev(s.blocks.end())->second.size += pages;
  else
    s.blocks[s.size] = Block{pages, 0, false};
  s.size += pages;
  bytes_.reserved += pages;
  return static_cast<std::size_t>(it - segments_.begin());
}
//! [grow]

//! [malloc]
std::uint64_t CachingAllocator::malloc(std::size_t bytes) {
  BOOK_CHECK(bytes > 0,
             "CachingAllocator::malloc: 0 bytes requested (a zero-size tensor needs no "
             "block; skip it)");
  const std::size_t size = round_up(bytes, kMinBlockSize);
  const bool small = size <= kSmallSize;
  for (int attempt = 0; attempt < 2; ++attempt) {
    // Best fit in the request's pool: the smallest free block that fits, then the lowest address.
    auto best =
        std::make_tuple(std::numeric_limits<std::size_t>::max(), std::size_t{0}, std::size_t{0});
    bool found = false;
    for (std::size_t i = 0; i < segments_.size(); ++i) {
      if (segments_[i].small != small) continue;
      for (const auto& [offset, block] : segments_[i].blocks)
        if (!block.live && block.size >= size && std::make_tuple(block.size, i, offset) < best) {
          best = std::make_tuple(block.size, i, offset);
          found = true;
        }
    }
    if (found) {
      const auto [unused, segment, offset] = best;
      split_and_take(segment, offset, size, bytes);
      return address_of(segment, offset);
    }
    grow(small, size);  // nothing cached fits: ask the device, then take from what it gave
  }
  BOOK_CHECK(false, "CachingAllocator::malloc: no block of " << size << " bytes after growing");
  return 0;
}

void CachingAllocator::split_and_take(std::size_t segment, std::size_t offset, std::size_t size,
                                      std::size_t requested) {
  Segment& s = segments_[segment];
  Block& b = s.blocks.at(offset);
  const std::size_t rest = b.size - size;
  // PyTorch splits a small block when the rest could hold a request, a large one only when the
  // rest is itself a large block; else the whole block is handed out (and counted allocated).
  const bool split = s.small ? rest >= kMinBlockSize : rest > kSmallSize;
  if (split) {
    b.size = size;
    s.blocks[offset + size] = Block{rest, 0, false};
  }
  b.live = true;
  b.requested = requested;
  bytes_.allocated += b.size;
  bytes_.requested += requested;
}
//! [malloc]

void CachingAllocator::free(std::uint64_t address) {
  const std::size_t segment = static_cast<std::size_t>(address >> kOffsetBits) - 1;
  const std::size_t offset = static_cast<std::size_t>(address & kOffsetMask);
  BOOK_CHECK((address >> kOffsetBits) >= 1 && segment < segments_.size() &&
                 segments_[segment].blocks.count(offset) == 1 &&
                 segments_[segment].blocks.at(offset).live,
             "CachingAllocator::free: no live block at address 0x"
                 << std::hex << address << std::dec << " (freed twice, or never allocated?)");
  auto& blocks = segments_[segment].blocks;
  auto it = blocks.find(offset);
  bytes_.allocated -= it->second.size;
  bytes_.requested -= it->second.requested;
  it->second.live = false;
  it->second.requested = 0;
  // Coalesce with free neighbours: the segment stays cached, in as few free blocks as possible.
  auto next = std::next(it);
  if (next != blocks.end() && !next->second.live) {
    it->second.size += next->second.size;
    blocks.erase(next);
  }
  if (it != blocks.begin()) {
    auto prev = std::prev(it);
    if (!prev->second.live) {
      prev->second.size += it->second.size;
      blocks.erase(it);
    }
  }
}

void CachingAllocator::empty_cache() {
  for (Segment& s : segments_) {
    if (s.blocks.empty()) continue;
    auto last = std::prev(s.blocks.end());
    if (last->second.live) continue;
    if (!options_.expandable_segments) {
      if (last != s.blocks.begin()) continue;  // a live block remains: the segment stays
      bytes_.reserved -= s.size;
      s.size = 0;
      s.blocks.clear();
      continue;
    }
    // Unmap the whole free pages at the end.
    const std::size_t end = round_up(last->first, kRoundLarge);
    if (end >= s.size) continue;
    bytes_.reserved -= s.size - end;
    s.size = end;
    if (end == last->first)
      s.blocks.erase(last);
    else
      last->second.size = end - last->first;
  }
}

void CachingAllocator::check_invariants() const {
  AllocatorBytes sum;
  for (std::size_t i = 0; i < segments_.size(); ++i) {
    const Segment& s = segments_[i];
    std::size_t expected_offset = 0;
    bool previous_free = false;
    for (const auto& [offset, block] : s.blocks) {
      BOOK_CHECK(offset == expected_offset, "segment " << i << ": block at " << offset
                                                       << " but the previous ends at "
                                                       << expected_offset);
      BOOK_CHECK(block.size > 0 && block.size % kMinBlockSize == 0,
                 "segment " << i << ": block at " << offset << " has size " << block.size);
      BOOK_CHECK(block.live || !previous_free,
                 "segment " << i << ": two neighbouring free blocks at " << offset);
      previous_free = !block.live;
      expected_offset += block.size;
      if (block.live) {
        BOOK_CHECK(block.requested > 0 && block.requested <= block.size,
                   "segment " << i << ": block at " << offset << " holds " << block.requested
                              << " requested bytes in " << block.size);
        sum.allocated += block.size;
        sum.requested += block.requested;
      }
    }
    BOOK_CHECK(expected_offset == s.size,
               "segment " << i << ": blocks cover " << expected_offset << " of " << s.size);
    sum.reserved += s.size;
  }
  BOOK_CHECK(sum.allocated == bytes_.allocated && sum.requested == bytes_.requested &&
                 sum.reserved == bytes_.reserved,
             "the blocks sum to " << sum.allocated << "/" << sum.requested << "/" << sum.reserved
                                  << " but the counters say " << bytes_.allocated << "/"
                                  << bytes_.requested << "/" << bytes_.reserved);
  BOOK_CHECK(bytes_.requested <= bytes_.allocated && bytes_.allocated <= bytes_.reserved,
             "requested " << bytes_.requested << " <= allocated " << bytes_.allocated
                          << " <= reserved " << bytes_.reserved << " does not hold");
}

double ReplayReport::fragmentation_at_peak() const {
  if (at_peak_reserved.reserved == 0) return 0;
  return 1.0 - static_cast<double>(at_peak_reserved.allocated) /
                   static_cast<double>(at_peak_reserved.reserved);
}

//! [replay]
ReplayReport replay(const std::vector<MemoryEvent>& events, AllocatorOptions options) {
  CachingAllocator allocator(options);
  // Live allocations by what the tracker knows of them; a stack, since an address (or a
  // 2-argument call's (0, category, bytes)) can be live more than once only in the latter case.
  std::map<std::tuple<std::uintptr_t, MemoryCategory, std::size_t>, std::vector<std::uint64_t>>
      live;
  ReplayReport r;
  for (std::size_t i = 0; i < events.size(); ++i) {
    const MemoryEvent& e = events[i];
    if (e.bytes == 0) continue;
    const auto key = std::make_tuple(e.address, e.category, e.bytes);
    if (e.allocate) {
      live[key].push_back(allocator.malloc(e.bytes));
      ++r.mallocs;
    } else {
      auto it = live.find(key);
      BOOK_CHECK(it != live.end() && !it->second.empty(),
                 "replay: event " << i << " releases " << e.bytes << " bytes of "
                                  << memory_category_name(e.category) << " at 0x" << std::hex
                                  << e.address << std::dec << " that no live allocation matches");
      allocator.free(it->second.back());
      it->second.pop_back();
    }
    const AllocatorBytes now = allocator.bytes();
    r.timeline.push_back({i, now});
    r.peak_requested = std::max(r.peak_requested, now.requested);
    r.peak_allocated = std::max(r.peak_allocated, now.allocated);
    if (now.reserved > r.at_peak_reserved.reserved) r.at_peak_reserved = now;
  }
  r.segments = allocator.segments();
  r.device_calls = allocator.device_calls();
  return r;
}
//! [replay]

}  // namespace book::mem
