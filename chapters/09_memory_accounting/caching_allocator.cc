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

CachingAllocator::CachingAllocator(AllocatorOptions options) : options_(options) {
  BOOK_CHECK(options.garbage_collection_threshold >= 0 && options.garbage_collection_threshold < 1,
             "AllocatorOptions: garbage_collection_threshold must be in [0, 1), got "
                 << options.garbage_collection_threshold << " (PyTorch's examples use 0.6 to 0.8)");
  BOOK_CHECK(options.garbage_collection_threshold == 0 || options.device_limit > 0,
             "AllocatorOptions: a garbage_collection_threshold of "
                 << options.garbage_collection_threshold
                 << " is a share of the device limit, and device_limit is 0 (unlimited); set one");
}

std::uint64_t CachingAllocator::address_of(std::size_t segment, std::size_t offset) {
  return (static_cast<std::uint64_t>(segment) + 1) << kOffsetBits | offset;
}

std::size_t CachingAllocator::segments() const {
  return static_cast<std::size_t>(std::count_if(segments_.begin(), segments_.end(),
                                                [](const Segment& s) { return s.size > 0; }));
}

std::size_t CachingAllocator::pending() const {
  std::size_t n = 0;
  for (const Segment& s : segments_)
    for (const auto& [offset, block] : s.blocks) n += block.pending;
  return n;
}

namespace {

// The bytes a new segment for a request of `size` takes: 2 MiB for the small pool; 20 MiB for a
// large request under 10 MiB (room for its neighbours); else the request rounded up to 2 MiB.
std::size_t segment_size(bool small, std::size_t size) {
  return small ? kSmallBuffer
               : (size < kMinLargeAlloc ? kLargeBuffer : round_up(size, kRoundLarge));
}

}  // namespace

//! [grow]
std::size_t CachingAllocator::grow(bool small, std::size_t size, int stream) {
  ++device_calls_;
  if (!options_.expandable_segments) {
    Segment s;
    s.small = small;
    s.stream = stream;
    s.size = segment_size(small, size);
    s.blocks[0] = Block{s.size, 0, false};
    bytes_.reserved += s.size;
    segments_.push_back(std::move(s));
    return segments_.size() - 1;
  }
  // Expandable: the pool's one segment (per stream) maps just enough 2 MiB pages at its end.
  auto it = std::find_if(segments_.begin(), segments_.end(),
                         [&](const Segment& s) { return s.small == small && s.stream == stream; });
  if (it == segments_.end()) {
    segments_.push_back(Segment{small, 0, {}, stream});
    it = std::prev(segments_.end());
  }
  Segment& s = *it;
  const bool last_free = !s.blocks.empty() && !std::prev(s.blocks.end())->second.live &&
                         !std::prev(s.blocks.end())->second.pending;
  const std::size_t have = last_free ? std::prev(s.blocks.end())->second.size : 0;
  const std::size_t pages = round_up(size - have, kRoundLarge);
  // Offsets past 2^40 would spill into the segment bits of an address.
  BOOK_CHECK(s.size + pages <= kMaxSegmentBytes,
             "CachingAllocator: the expandable segment would grow to "
                 << s.size + pages << " bytes, above the simulated 2^40 (1 TiB); free tensors, "
                 << "or set a device_limit");
  if (last_free)
    std::prev(s.blocks.end())->second.size += pages;
  else
    s.blocks[s.size] = Block{pages, 0, false};
  s.size += pages;
  bytes_.reserved += pages;
  return static_cast<std::size_t>(it - segments_.begin());
}
//! [grow]

bool CachingAllocator::try_grow(bool small, std::size_t size, int stream) {
  std::size_t adds = segment_size(small, size);
  if (options_.expandable_segments) {
    adds = round_up(size, kRoundLarge);
    for (const Segment& s : segments_)
      if (s.small == small && s.stream == stream && !s.blocks.empty()) {
        const Block& last = std::prev(s.blocks.end())->second;
        if (!last.live && !last.pending) adds = round_up(size - last.size, kRoundLarge);
      }
  }
  if (options_.device_limit > 0 && bytes_.reserved + adds > options_.device_limit) return false;
  grow(small, size, stream);
  return true;
}

void CachingAllocator::release_free_segment(Segment& s) {
  bytes_.reserved -= s.size;
  s.size = 0;
  s.blocks.clear();
}

//! [collect_garbage]
void CachingAllocator::collect_garbage(std::size_t incoming) {
  const double target = options_.garbage_collection_threshold * options_.device_limit;
  if (target == 0 || options_.expandable_segments) return;
  // Release wholly free cached segments, the longest-unused first, until the new segment would
  // keep reserved under the threshold (or nothing cached is left to release).
  while (static_cast<double>(bytes_.reserved + incoming) > target) {
    Segment* oldest = nullptr;
    for (Segment& s : segments_)
      if (s.size > 0 && s.blocks.size() == 1 && !s.blocks.begin()->second.live &&
          !s.blocks.begin()->second.pending && (!oldest || s.free_since < oldest->free_since))
        oldest = &s;
    if (oldest == nullptr) return;
    release_free_segment(*oldest);
    ++collected_;
  }
}
//! [collect_garbage]

//! [malloc]
std::uint64_t CachingAllocator::malloc(std::size_t bytes, int stream) {
  BOOK_CHECK(bytes > 0,
             "CachingAllocator::malloc: 0 bytes requested (a zero-size tensor needs no "
             "block; skip it)");
  // Refused before rounding: near 2^64 the rounding wraps to 0 and the search never ends.
  BOOK_CHECK(bytes <= kMaxSegmentBytes,
             "CachingAllocator::malloc: " << bytes << " bytes requested, above the simulated "
                                          << "device's 2^40 (1 TiB) per request; ask for less");
  BOOK_CHECK(stream >= 0, "CachingAllocator::malloc: stream " << stream << " (streams are >= 0)");
  const std::size_t size = round_up(bytes, kMinBlockSize);
  const bool small = size <= kSmallSize;
  for (bool retried = false;;) {
    // Best fit among the request's pool and stream: the smallest free block that fits, then the
    // lowest address. Pending blocks (another stream may still read them) are not free.
    auto best =
        std::make_tuple(std::numeric_limits<std::size_t>::max(), std::size_t{0}, std::size_t{0});
    bool found = false;
    for (std::size_t i = 0; i < segments_.size(); ++i) {
      if (segments_[i].small != small || segments_[i].stream != stream) continue;
      for (const auto& [offset, block] : segments_[i].blocks)
        if (!block.live && !block.pending && block.size >= size &&
            std::make_tuple(block.size, i, offset) < best) {
          best = std::make_tuple(block.size, i, offset);
          found = true;
        }
    }
    if (found) {
      const auto [unused, segment, offset] = best;
      split_and_take(segment, offset, size, bytes);
      return address_of(segment, offset);
    }
    // Nothing cached fits: ask the device (after the garbage collection, when it is on).
    collect_garbage(segment_size(small, size));
    if (try_grow(small, size, stream)) continue;
    // The device said no: wait for every stream, give the whole cache back, and ask once more.
    BOOK_CHECK(!retried, "CachingAllocator: out of memory: tried to allocate "
                             << size << " bytes on stream " << stream << " with " << bytes_.reserved
                             << " of the device's " << options_.device_limit << " bytes reserved ("
                             << bytes_.allocated
                             << " allocated) after freeing the cache; free tensors, or set "
                                "expandable_segments to waste less");
    retried = true;
    ++retries_;
    synchronize();
    empty_cache();
  }
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

namespace {

// The live block at `address`, or a book::Error naming `who`.
template <typename Segments>
auto& live_block(Segments& segments, std::uint64_t address, const char* who) {
  const std::size_t segment = static_cast<std::size_t>(address >> kOffsetBits) - 1;
  const std::size_t offset = static_cast<std::size_t>(address & kOffsetMask);
  BOOK_CHECK((address >> kOffsetBits) >= 1 && segment < segments.size() &&
                 segments[segment].blocks.count(offset) == 1 &&
                 segments[segment].blocks.at(offset).live,
             who << ": no live block at address 0x" << std::hex << address << std::dec
                 << " (freed twice, or never allocated?)");
  return segments[segment].blocks.at(offset);
}

}  // namespace

void CachingAllocator::record_stream(std::uint64_t address, int stream) {
  BOOK_CHECK(stream >= 0,
             "CachingAllocator::record_stream: stream " << stream << " (streams are >= 0)");
  Block& block = live_block(segments_, address, "CachingAllocator::record_stream");
  const std::size_t segment = static_cast<std::size_t>(address >> kOffsetBits) - 1;
  if (stream != segments_[segment].stream) block.other_stream = true;
}

void CachingAllocator::free(std::uint64_t address) {
  Block& block = live_block(segments_, address, "CachingAllocator::free");
  const std::size_t segment = static_cast<std::size_t>(address >> kOffsetBits) - 1;
  const std::size_t offset = static_cast<std::size_t>(address & kOffsetMask);
  bytes_.allocated -= block.size;
  bytes_.requested -= block.requested;
  block.live = false;
  block.requested = 0;
  ++frees_;
  if (block.other_stream) {  // another stream may still read it: reusable after synchronize()
    block.pending = true;
    return;
  }
  coalesce(segment, offset);
}

// Merges the free block at `offset` with free neighbours: the segment stays cached, in as few
// free blocks as possible. A segment left wholly free remembers when (the collector's age).
void CachingAllocator::coalesce(std::size_t segment, std::size_t offset) {
  auto& blocks = segments_[segment].blocks;
  auto it = blocks.find(offset);
  const auto is_free = [](const Block& b) { return !b.live && !b.pending; };
  // Loops, not ifs: after synchronize() a run of formerly pending blocks can be free together.
  for (auto next = std::next(it); next != blocks.end() && is_free(next->second);
       next = std::next(it)) {
    it->second.size += next->second.size;
    blocks.erase(next);
  }
  while (it != blocks.begin() && is_free(std::prev(it)->second)) {
    auto prev = std::prev(it);
    prev->second.size += it->second.size;
    blocks.erase(it);
    it = prev;
  }
  if (blocks.size() == 1 && is_free(blocks.begin()->second)) segments_[segment].free_since = frees_;
}

void CachingAllocator::synchronize() {
  for (std::size_t i = 0; i < segments_.size(); ++i) {
    std::vector<std::size_t> waiting;
    for (auto& [offset, block] : segments_[i].blocks)
      if (block.pending) {
        block.pending = block.other_stream = false;
        waiting.push_back(offset);
      }
    for (std::size_t offset : waiting)  // a merge may have absorbed it into its neighbour
      if (segments_[i].blocks.count(offset) == 1) coalesce(i, offset);
  }
}

void CachingAllocator::empty_cache() {
  for (Segment& s : segments_) {
    if (s.blocks.empty()) continue;
    auto last = std::prev(s.blocks.end());
    if (last->second.live || last->second.pending) continue;
    if (!options_.expandable_segments) {
      if (last != s.blocks.begin()) continue;  // a live block remains: the segment stays
      release_free_segment(s);
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
      const bool free_block = !block.live && !block.pending;
      BOOK_CHECK(!free_block || !previous_free,
                 "segment " << i << ": two neighbouring free blocks at " << offset);
      previous_free = free_block;
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
