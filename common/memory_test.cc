// MemoryTracker and TrackedBuffer: the peak is the sum of the buffers live at that moment, per
// category and in total; moves carry the report; a bad release is refused; threads may share it.
#include "common/memory.h"

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "common/check.h"
#include "common/rng.h"

namespace book {
namespace {

TEST(MemoryTracker, PeakEqualsTheLiveBuffersAtThePeak) {
  // A seeded random sequence of allocations and releases, replayed against a plain count of the
  // live buffers: the tracker's peak and its breakdown must be exactly that count's.
  MemoryTracker tracker;
  Rng rng(11);
  std::vector<std::unique_ptr<TrackedBuffer<float>>> live;
  MemorySnapshot expected_at_peak, expected_category_peak;
  std::size_t expected_peak = 0;
  auto live_snapshot = [&] {
    MemorySnapshot s;
    for (const auto& b : live) s.bytes[static_cast<std::size_t>(b->category())] += b->bytes();
    return s;
  };
  for (int event = 0; event < 2000; ++event) {
    if (live.empty() || rng.uniform() < 0.55) {
      const auto category = all_memory_categories()[rng.uniform_int(0, kMemoryCategoryCount - 1)];
      live.push_back(std::make_unique<TrackedBuffer<float>>(
          static_cast<std::size_t>(rng.uniform_int(1, 5000)), category, &tracker));
    } else {
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(rng.uniform_int(0, live.size() - 1)));
    }
    const MemorySnapshot now = live_snapshot();
    for (std::size_t c = 0; c < kMemoryCategoryCount; ++c)
      expected_category_peak.bytes[c] = std::max(expected_category_peak.bytes[c], now.bytes[c]);
    if (now.total() > expected_peak) expected_peak = now.total(), expected_at_peak = now;
    ASSERT_EQ(tracker.current_total(), now.total()) << "after event " << event;
  }
  EXPECT_EQ(tracker.peak_total(), expected_peak);
  EXPECT_EQ(tracker.at_peak().total(), expected_peak) << "the breakdown at the peak sums to it";
  for (MemoryCategory c : all_memory_categories()) {
    EXPECT_EQ(tracker.at_peak()[c], expected_at_peak[c]) << memory_category_name(c);
    EXPECT_EQ(tracker.peak(c), expected_category_peak[c]) << memory_category_name(c);
    EXPECT_EQ(tracker.current(c), live_snapshot()[c]) << memory_category_name(c);
  }
  live.clear();
  EXPECT_EQ(tracker.current_total(), 0u) << "every buffer released its bytes";
}

TEST(MemoryTracker, ResetPeaksStartsFromWhatIsLive) {
  MemoryTracker tracker;
  TrackedBuffer<double> kept(100, MemoryCategory::kParameters, &tracker);
  { TrackedBuffer<double> gone(1000, MemoryCategory::kActivations, &tracker); }
  EXPECT_EQ(tracker.peak_total(), 1100u * 8);
  tracker.reset_peaks();
  EXPECT_EQ(tracker.peak_total(), 800u);
  EXPECT_EQ(tracker.peak(MemoryCategory::kActivations), 0u);
  EXPECT_EQ(tracker.at_peak()[MemoryCategory::kParameters], 800u);
  EXPECT_EQ(tracker.allocation_count(), 2u);
}

TEST(TrackedBuffer, MovesCarryTheReportAndResetReleasesIt) {
  MemoryTracker tracker;
  TrackedBuffer<int> a(10, 7, MemoryCategory::kGradients, &tracker);
  EXPECT_EQ(a[9], 7);
  TrackedBuffer<int> b(std::move(a));
  EXPECT_EQ(a.size(), 0u);
  EXPECT_EQ(a.data(), nullptr);
  EXPECT_EQ(tracker.current(MemoryCategory::kGradients), 40u) << "a move is not an allocation";
  TrackedBuffer<int> c(3, MemoryCategory::kOther, &tracker);
  c = std::move(b);  // c's 3 ints are released, b's 10 move in
  EXPECT_EQ(tracker.current(MemoryCategory::kOther), 0u);
  EXPECT_EQ(tracker.current(MemoryCategory::kGradients), 40u);
  EXPECT_EQ(c.category(), MemoryCategory::kGradients);
  c.reset();
  EXPECT_EQ(tracker.current_total(), 0u);
  EXPECT_EQ(tracker.peak_total(), 52u) << "10 + 3 ints were live together";
  TrackedBuffer<float> untracked(5, 1.5f, MemoryCategory::kActivations);
  EXPECT_EQ(untracked.bytes(), 20u) << "without a tracker it is a plain buffer";
}

TEST(MemoryTracker, RefusesToReleaseMoreThanIsLive) {
  MemoryTracker tracker;
  tracker.allocate(MemoryCategory::kActivations, 64);
  try {
    tracker.release(MemoryCategory::kOptimizerStates, 64);
    ADD_FAILURE() << "releasing bytes never allocated under that category was accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("64 bytes of optimizer_states released but only 0"),
              std::string::npos)
        << error.what();
  }
}

TEST(MemoryTracker, ThreadsShareOneTracker) {
  MemoryTracker tracker;
  constexpr int kThreads = 4, kBuffers = 500;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&tracker, t] {
      Rng rng(100 + t);
      std::vector<TrackedBuffer<char>> held;
      for (int i = 0; i < kBuffers; ++i) {
        held.emplace_back(static_cast<std::size_t>(rng.uniform_int(1, 300)),
                          MemoryCategory::kCommunication, &tracker);
        if (held.size() > 8) held.erase(held.begin());
      }
    });
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(tracker.current_total(), 0u);
  EXPECT_EQ(tracker.allocation_count(), static_cast<std::size_t>(kThreads * kBuffers));
  EXPECT_LE(tracker.peak_total(), static_cast<std::size_t>(kThreads * 9 * 300))
      << "at most 9 buffers of at most 300 bytes live per thread";
  EXPECT_EQ(tracker.peak(MemoryCategory::kCommunication), tracker.peak_total());
}

TEST(MemoryCategory, EveryCategoryHasItsOwnName) {
  std::set<std::string> names;
  for (MemoryCategory c : all_memory_categories()) names.insert(memory_category_name(c));
  EXPECT_EQ(names.size(), kMemoryCategoryCount);
  EXPECT_EQ(std::string(memory_category_name(MemoryCategory::kOptimizerStates)),
            "optimizer_states");
}

TEST(MemoryTracker, EventLogIsOffByDefault) {
  MemoryTracker tracker;
  { TrackedBuffer<float> a(10, MemoryCategory::kActivations, &tracker); }
  tracker.allocate(MemoryCategory::kOther, 8);
  tracker.release(MemoryCategory::kOther, 8);
  EXPECT_TRUE(tracker.events().empty());
  EXPECT_EQ(tracker.allocation_count(), 2u);
  EXPECT_EQ(tracker.peak_total(), 40u);
}

TEST(MemoryTracker, EventLogRecordsEveryCallWithItsAddressInOrder) {
  MemoryTracker tracker;
  tracker.record_events(true);
  const void* a_address = nullptr;
  const void* b_address = nullptr;
  {
    TrackedBuffer<float> a(10, MemoryCategory::kActivations, &tracker);
    a_address = a.data();
    TrackedBuffer<double> b(3, MemoryCategory::kGradients, &tracker);
    b_address = b.data();
    TrackedBuffer<float> moved = std::move(a);  // a move reports nothing
    tracker.allocate(MemoryCategory::kOther, 8);
    tracker.release(MemoryCategory::kOther, 8);
  }  // moved, then b, released (reverse order of declaration)
  tracker.record_events(false);
  { TrackedBuffer<float> c(5, MemoryCategory::kOther, &tracker); }  // not recorded
  const std::vector<MemoryEvent> e = tracker.events();
  ASSERT_EQ(e.size(), 6u);
  const auto address = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p); };
  const std::vector<std::tuple<bool, MemoryCategory, std::size_t, std::uintptr_t>> expected = {
      {true, MemoryCategory::kActivations, 40, address(a_address)},
      {true, MemoryCategory::kGradients, 24, address(b_address)},
      {true, MemoryCategory::kOther, 8, 0},
      {false, MemoryCategory::kOther, 8, 0},
      {false, MemoryCategory::kActivations, 40, address(a_address)},
      {false, MemoryCategory::kGradients, 24, address(b_address)},
  };
  for (std::size_t i = 0; i < e.size(); ++i) {
    const auto& [allocate, category, bytes, where] = expected[i];
    EXPECT_EQ(e[i].allocate, allocate) << "event " << i;
    EXPECT_EQ(e[i].category, category) << "event " << i;
    EXPECT_EQ(e[i].bytes, bytes) << "event " << i;
    EXPECT_EQ(e[i].address, where) << "event " << i;
  }
  EXPECT_EQ(tracker.current_total(), 0u);
  EXPECT_EQ(tracker.peak_total(), 72u);
}

}  // namespace
}  // namespace book
