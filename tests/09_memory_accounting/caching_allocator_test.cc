// The caching-allocator simulator: exact bytes on a hand-made trace (default and expandable
// segments), its invariants after every call of seeded random traces (allocated <= reserved,
// every free matches a live block, no block handed out twice), empty_cache, streams, the
// garbage-collection threshold and the retry on out-of-memory as exact traces, and the replay of
// a real training step of chapter 4's Trainer.
#include "chapters/09_memory_accounting/caching_allocator.h"

#include <gtest/gtest.h>

#include <iterator>
#include <map>
#include <vector>

#include "chapters/04_training_baseline/trainer.h"
#include "common/rng.h"
#include "common/testing/expect_error.h"

namespace book::mem {
namespace {

constexpr std::size_t MiB = 1 << 20;

TEST(CachingAllocator, HandMadeTraceDefault) {
  CachingAllocator a;
  const std::uint64_t small = a.malloc(1000);  // 1024, a new 2 MiB small segment, split
  EXPECT_EQ(a.bytes().allocated, 1024u);
  EXPECT_EQ(a.bytes().reserved, 2 * MiB);
  const std::uint64_t three = a.malloc(3 * MiB);  // a new 20 MiB large segment, split
  EXPECT_EQ(a.bytes().reserved, 22 * MiB);
  // 16 MiB + 1 rounds to 16 MiB + 512 and takes the cached 17 MiB rest; what remains, 1 MiB − 512,
  // is not above 1 MiB, so the block is not split: 17 MiB counted allocated.
  a.malloc(16 * MiB + 1);
  EXPECT_EQ(a.bytes().allocated, 1024 + 3 * MiB + 17 * MiB);
  EXPECT_EQ(a.bytes().requested, 1000 + 3 * MiB + 16 * MiB + 1);
  EXPECT_EQ(a.bytes().reserved, 22 * MiB);
  a.free(three);  // cached, not returned
  EXPECT_EQ(a.bytes().reserved, 22 * MiB);
  a.malloc(4 * MiB);  // the 3 MiB hole is too small: another 20 MiB segment
  EXPECT_EQ(a.bytes().allocated, 1024 + 17 * MiB + 4 * MiB);
  EXPECT_EQ(a.bytes().reserved, 42 * MiB);
  EXPECT_EQ(a.segments(), 3u);
  EXPECT_EQ(a.device_calls(), 3u);
  a.free(small);
  a.empty_cache();  // the small segment is empty: returned; the large ones hold live blocks
  EXPECT_EQ(a.bytes().reserved, 40 * MiB);
  a.check_invariants();
}

TEST(CachingAllocator, HandMadeTraceExpandableSegments) {
  CachingAllocator a({.expandable_segments = true});
  a.malloc(1000);  // the small pool's segment maps one 2 MiB page
  EXPECT_EQ(a.bytes().reserved, 2 * MiB);
  const std::uint64_t three =
      a.malloc(3 * MiB);  // the large segment maps 4 MiB; rest 1 MiB: no split
  EXPECT_EQ(a.bytes().allocated, 1024 + 4 * MiB);
  EXPECT_EQ(a.bytes().reserved, 6 * MiB);
  a.malloc(16 * MiB + 1);  // grows by 18 MiB; the 2 MiB − 512 rest is split off
  EXPECT_EQ(a.bytes().allocated, 1024 + 4 * MiB + 16 * MiB + 512);
  EXPECT_EQ(a.bytes().reserved, 24 * MiB);
  a.free(three);
  a.malloc(4 * MiB);  // fits the 4 MiB hole exactly: no growth
  EXPECT_EQ(a.bytes().allocated, 1024 + 4 * MiB + 16 * MiB + 512);
  EXPECT_EQ(a.bytes().reserved, 24 * MiB);
  EXPECT_EQ(a.segments(), 2u);
  EXPECT_EQ(a.device_calls(), 3u);
  a.check_invariants();
}

// Seeded random traces of mixed sizes (512 B to 40 MiB): after every call the invariants hold,
// and the live blocks' address ranges never overlap (a block is never handed out twice).
// With `streams`, requests come from streams 0-2, some blocks are used by a second stream before
// their free, and synchronize() runs now and then: a block freed while pending is not handed out
// again before it.
void random_trace(AllocatorOptions options, std::uint64_t seed, bool streams = false) {
  CachingAllocator a(options);
  Rng rng(seed);
  std::map<std::uint64_t, std::size_t> live;     // address -> rounded size
  std::map<std::uint64_t, std::size_t> pending;  // freed after a record_stream, not synchronised
  for (int i = 0; i < 600; ++i) {
    if (streams && rng.uniform() < 0.05) {
      a.synchronize();
      pending.clear();
    } else if (!live.empty() && rng.uniform() < 0.45) {
      auto it =
          std::next(live.begin(), rng.uniform_int(0, static_cast<std::int64_t>(live.size()) - 1));
      const bool shared = streams && rng.uniform() < 0.3;
      if (shared) a.record_stream(it->first, 3);
      a.free(it->first);
      if (shared) pending[it->first] = it->second;
      live.erase(it);
    } else {
      const bool large = rng.uniform() < 0.3;
      const std::size_t bytes = static_cast<std::size_t>(large ? rng.uniform_int(MiB + 1, 40 * MiB)
                                                               : rng.uniform_int(1, MiB));
      const int stream = streams ? static_cast<int>(rng.uniform_int(0, 2)) : 0;
      const std::uint64_t address = a.malloc(bytes, stream);
      const std::size_t size = (bytes + 511) / 512 * 512;
      for (const auto& [held, held_size] : pending)
        ASSERT_TRUE(address + size <= held || held + held_size <= address)
            << "seed " << seed << " call " << i << ": block at " << address
            << " overlaps the pending block at " << held;
      auto next = live.lower_bound(address);
      ASSERT_TRUE(next == live.end() || next->first >= address + size)
          << "seed " << seed << " call " << i << ": block at " << address << " of " << size
          << " overlaps the live block at " << next->first;
      if (next != live.begin()) {
        auto prev = std::prev(next);
        ASSERT_LE(prev->first + prev->second, address)
            << "seed " << seed << " call " << i << ": overlaps the block at " << prev->first;
      }
      live[address] = size;
    }
    ASSERT_NO_THROW(a.check_invariants()) << "seed " << seed << " call " << i;
    ASSERT_LE(a.bytes().allocated, a.bytes().reserved);
  }
  for (const auto& [address, size] : live) a.free(address);
  a.synchronize();
  EXPECT_EQ(a.bytes().allocated, 0u);
  EXPECT_GT(a.bytes().reserved, 0u);  // cached, not returned
  a.empty_cache();
  EXPECT_EQ(a.bytes().reserved, 0u) << "seed " << seed;
  a.check_invariants();
}

TEST(CachingAllocator, InvariantsHoldOnRandomTraces) {
  for (std::uint64_t seed : {1, 2, 3}) {
    random_trace({}, seed);
    random_trace({.expandable_segments = true}, seed);
    random_trace({}, seed, /*streams=*/true);
    random_trace({.expandable_segments = true}, seed, /*streams=*/true);
  }
}

TEST(CachingAllocator, BadCallsAreRefused) {
  CachingAllocator a;
  testing::expect_error([&] { a.malloc(0); }, "0 bytes requested");
  const std::uint64_t p = a.malloc(100);
  a.free(p);
  testing::expect_error([&] { a.free(p); }, {"no live block at address", "freed twice"});
  testing::expect_error([&] { a.free(12345); }, "no live block");
  const std::vector<MemoryEvent> bad = {{true, MemoryCategory::kOther, 64, 0x1000},
                                        {false, MemoryCategory::kOther, 64, 0x2000}};
  testing::expect_error([&] { replay(bad); }, {"event 1", "0x2000", "no live allocation"});
}

// Streams: a block cached by stream 0 is not handed to stream 1, which gets its own segment; a
// block stream 1 also used (record_stream) is not reusable after its free until synchronize().
TEST(CachingAllocator, StreamsKeepTheirBlocksUntilSynchronised) {
  CachingAllocator a;
  const std::uint64_t x = a.malloc(1000, 0);  // stream 0's 2 MiB segment, first 1024 bytes
  a.free(x);
  const std::uint64_t y = a.malloc(1000, 1);
  EXPECT_NE(y, x) << "stream 1 took the block stream 0 cached";
  EXPECT_EQ(a.segments(), 2u);
  EXPECT_EQ(a.bytes().reserved, 4 * MiB);
  const std::uint64_t z = a.malloc(1000, 0);  // stream 0 takes its own cached block again
  EXPECT_EQ(z, x);
  a.record_stream(z, 1);
  a.free(z);
  EXPECT_EQ(a.pending(), 1u);
  EXPECT_EQ(a.bytes().allocated, 1024u);      // y only: the pending block is not allocated
  const std::uint64_t w = a.malloc(1000, 0);  // not the pending block: the next 1024 bytes
  EXPECT_EQ(w, x + 1024);
  a.check_invariants();
  a.synchronize();
  EXPECT_EQ(a.pending(), 0u);
  const std::uint64_t v = a.malloc(1000, 0);  // reusable now: the best fit, at offset 0
  EXPECT_EQ(v, x);
  EXPECT_EQ(a.device_calls(), 2u);
  a.check_invariants();
}

// The garbage-collection threshold: before asking the device for more past 50% of its 100 MiB,
// release the cached segments that have been free longest until the new one stays under.
TEST(CachingAllocator, GarbageCollectionReleasesTheOldestCachedSegments) {
  for (double threshold : {0.0, 0.5}) {
    CachingAllocator a({.device_limit = 100 * MiB, .garbage_collection_threshold = threshold});
    const std::uint64_t p = a.malloc(12 * MiB), q = a.malloc(14 * MiB);  // own segments
    a.free(p);                                                           // free first: the oldest
    a.free(q);
    EXPECT_EQ(a.bytes().reserved, 26 * MiB);
    a.malloc(30 * MiB);  // neither fits; 26 + 30 = 56 MiB would pass 50
    if (threshold == 0) {
      EXPECT_EQ(a.bytes().reserved, 56 * MiB);
      EXPECT_EQ(a.collected(), 0u);
    } else {
      EXPECT_EQ(a.bytes().reserved, 44 * MiB);  // the 12 MiB segment went; 14 + 30 is under
      EXPECT_EQ(a.collected(), 1u);
    }
    EXPECT_EQ(a.device_calls(), 3u);
    a.malloc(14 * MiB);  // the 14 MiB segment is still cached: no device call
    EXPECT_EQ(a.device_calls(), 3u);
    a.check_invariants();
  }
}

// Retry on out-of-memory: the device (64 MiB) refuses a 50 MiB segment while 40 MiB sit in the
// cache (pending on another stream); the allocator synchronises, frees the cache and gets it. With
// the cache empty and 50 MiB live, a 20 MiB request fails with the bytes in the message.
TEST(CachingAllocator, RetryFreesTheCacheThenFailsWithTheBytes) {
  CachingAllocator a({.device_limit = 64 * MiB});
  const std::uint64_t p = a.malloc(40 * MiB);
  a.record_stream(p, 2);
  a.free(p);
  EXPECT_EQ(a.pending(), 1u);
  a.malloc(50 * MiB);
  EXPECT_EQ(a.retries(), 1u);
  EXPECT_EQ(a.pending(), 0u);
  EXPECT_EQ(a.bytes().reserved, 50 * MiB);
  EXPECT_EQ(a.device_calls(), 2u);
  testing::expect_error([&] { a.malloc(20 * MiB); },
                        {"out of memory", "tried to allocate 20971520 bytes on stream 0",
                         "52428800 of the device's 67108864 bytes reserved"});
  EXPECT_EQ(a.retries(), 2u);
  a.check_invariants();
}

TEST(CachingAllocator, BadOptionsAndStreamsAreRefused) {
  testing::expect_error(
      [] { CachingAllocator({.device_limit = MiB, .garbage_collection_threshold = 1.5}); },
      {"garbage_collection_threshold must be in [0, 1)", "1.5"});
  testing::expect_error([] { CachingAllocator({.garbage_collection_threshold = 0.6}); },
                        {"device_limit is 0"});
  CachingAllocator a;
  testing::expect_error([&] { a.malloc(100, -1); }, {"stream -1"});
  const std::uint64_t p = a.malloc(100);
  testing::expect_error([&] { a.record_stream(p, -3); }, {"stream -3"});
  a.free(p);
  testing::expect_error([&] { a.record_stream(p, 1); }, {"record_stream", "no live block"});
}

// A real step: chapter 4's Trainer (BF16, micro-batch 32) built and stepped twice with the
// tracker's event log on; the replay frees every block the tracker saw released.
TEST(CachingAllocator, ReplaysARealTrainingStep) {
  MemoryTracker tracker;
  tracker.record_events(true);
  {
    train::TrainOptions o;
    o.precision = DType::kBF16;
    o.micro_batch = 32;
    train::Trainer trainer(o, &tracker);
    trainer.step();
    trainer.step();
  }
  const std::vector<MemoryEvent> events = tracker.events();
  std::size_t allocations = 0, releases = 0;
  for (const MemoryEvent& e : events) (e.allocate ? allocations : releases) += e.bytes > 0;
  ASSERT_EQ(allocations, releases) << "the trainer released every buffer it allocated";
  const ReplayReport def = replay(events), exp = replay(events, {.expandable_segments = true});
  for (const ReplayReport* r : {&def, &exp}) {
    EXPECT_EQ(r->mallocs, allocations);
    EXPECT_EQ(r->peak_requested, tracker.peak_total()) << "requested bytes are the tracker's";
    EXPECT_EQ(r->timeline.back().bytes.allocated, 0u);
    for (const AllocatorSample& s : r->timeline) {
      ASSERT_LE(s.bytes.requested, s.bytes.allocated) << "event " << s.event;
      ASSERT_LE(s.bytes.allocated, s.bytes.reserved) << "event " << s.event;
    }
  }
  EXPECT_LE(exp.at_peak_reserved.reserved, def.at_peak_reserved.reserved)
      << "expandable segments reserved more than the default on this trace";
}

}  // namespace
}  // namespace book::mem
