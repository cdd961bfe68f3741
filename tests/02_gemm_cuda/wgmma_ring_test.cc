// Rung 10's producer/consumer protocol on the CPU: the kernel's stage and parity functions
// (wgmma.h) drive a model of the mbarriers as the PTX ISA describes them, under seeded random
// interleavings of the producer, the two consumer warpgroups and the TMA engine's late
// deliveries. Checked: no deadlock, every consumer reads every K tile in order from a stage that
// holds exactly that tile, and TMA never writes a stage that a consumer has not released.
#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <sstream>
#include <string>
#include <vector>

#include "chapters/02_gemm_cuda/wgmma.h"
#include "common/rng.h"

namespace book::gemm_cuda {
namespace {

using W = WgmmaTile;

// An mbarrier: a phase completes when its expected arrivals have arrived and the transaction
// bytes announced by arrive.expect_tx have been delivered; completed phases are counted.
struct Barrier {
  int arrivals_per_phase = 1;
  int pending = 1;         // arrivals still missing in the current phase
  std::int64_t bytes = 0;  // transaction bytes announced minus bytes delivered
  int completed = 0;       // phases completed so far

  explicit Barrier(int count) : arrivals_per_phase(count), pending(count) {}
  void maybe_complete() {
    if (pending == 0 && bytes == 0) ++completed, pending = arrivals_per_phase;
  }
  void arrive() { --pending, maybe_complete(); }
  void arrive_expect_tx(std::int64_t n) { bytes += n, arrive(); }
  void complete_tx(std::int64_t n) { bytes -= n, maybe_complete(); }
  // try_wait.parity: true once the latest phase of that parity has completed, i.e. when the
  // phase now in progress has the other parity.
  bool try_wait_parity(unsigned parity) const { return (unsigned(completed) & 1u) != parity; }
};

struct Copy {  // a TMA copy in flight
  int stage = 0;
  int tile = 0;
};

// A deliberate bug, to show that the walk notices one.
enum class Bug { kNone, kProducerNeverWaits, kConsumerWaitsForTheWrongParity };

// Runs the protocol for k_tiles K tiles under one random interleaving; returns "" or what broke.
std::string run_ring(int k_tiles, std::uint64_t seed, Bug bug = Bug::kNone) {
  constexpr int kConsumers = W::kConsumers;
  constexpr std::int64_t kBytes = W::kStageBytes;
  std::vector<Barrier> full(W::kStages, Barrier(1)), empty(W::kStages, Barrier(kConsumers));
  std::vector<int> holds(W::kStages, -1);             // the K tile each stage's memory holds
  std::vector<int> reading(W::kStages, 0);            // consumers between their wait and release
  std::vector<int> consumer_tile(kConsumers, 0);      // next tile each consumer reads
  std::vector<bool> consumer_has(kConsumers, false);  // has waited, not yet released
  int producer_tile = 0;
  std::deque<Copy> in_flight;
  Rng rng(seed);
  std::ostringstream why;
  for (long step = 0; step < 200000; ++step) {
    bool all_done = producer_tile == k_tiles && in_flight.empty();
    for (int c = 0; c < kConsumers; ++c) all_done = all_done && consumer_tile[c] == k_tiles;
    if (all_done) return "";
    const int actor = static_cast<int>(rng.uniform_int(0, kConsumers + 1));
    if (actor == 0 && producer_tile < k_tiles) {  // the producer thread
      const int kt = producer_tile, stage = wgmma_stage(kt);
      if (bug != Bug::kProducerNeverWaits && wgmma_producer_waits(kt) &&
          !empty[stage].try_wait_parity(wgmma_empty_parity(kt)))
        continue;  // spins
      for (int c = 0; c < kConsumers; ++c)
        if (consumer_tile[c] <= kt - W::kStages) {
          why << "producer refills stage " << stage << " with tile " << kt << " before consumer "
              << c << " has finished tile " << kt - W::kStages;
          return why.str();
        }
      full[stage].arrive_expect_tx(kBytes);
      in_flight.push_back({stage, kt});
      ++producer_tile;
    } else if (actor == 1 && !in_flight.empty()) {  // TMA delivers one copy, any of them
      const std::size_t i = static_cast<std::size_t>(
          rng.uniform_int(0, static_cast<std::int64_t>(in_flight.size()) - 1));
      const Copy copy = in_flight[i];
      in_flight.erase(in_flight.begin() + static_cast<std::ptrdiff_t>(i));
      if (reading[copy.stage] != 0) {
        why << "TMA writes tile " << copy.tile << " into stage " << copy.stage << " under "
            << reading[copy.stage] << " readers";
        return why.str();
      }
      holds[copy.stage] = copy.tile;
      full[copy.stage].complete_tx(kBytes);
    } else if (actor >= 2) {  // a consumer warpgroup
      const int c = actor - 2, kt = consumer_tile[c];
      if (kt == k_tiles) continue;
      const int stage = wgmma_stage(kt);
      if (!consumer_has[c]) {
        const unsigned parity =
            wgmma_full_parity(kt) ^ (bug == Bug::kConsumerWaitsForTheWrongParity ? 1u : 0u);
        if (!full[stage].try_wait_parity(parity)) continue;  // spins
        if (holds[stage] != kt) {
          why << "consumer " << c << " passes the full barrier for tile " << kt << " but stage "
              << stage << " holds tile " << holds[stage];
          return why.str();
        }
        consumer_has[c] = true, ++reading[stage];
      } else {  // its wgmmas are done: release the stage
        consumer_has[c] = false, --reading[stage];
        empty[stage].arrive();
        ++consumer_tile[c];
      }
    }
  }
  why << "no progress after 200000 steps (deadlock): producer at tile " << producer_tile
      << ", consumers at " << consumer_tile[0] << " and " << consumer_tile[1];
  return why.str();
}

TEST(WgmmaRing, StageAndParitiesFollowTheUsesOfEachStage) {
  EXPECT_EQ(wgmma_stage(0), 0);
  EXPECT_EQ(wgmma_stage(W::kStages + 1), 1);
  EXPECT_EQ(wgmma_full_parity(W::kStages - 1), 0u) << "first fill of each stage: phase 0";
  EXPECT_EQ(wgmma_full_parity(W::kStages), 1u);
  EXPECT_EQ(wgmma_full_parity(2 * W::kStages), 0u);
  EXPECT_FALSE(wgmma_producer_waits(W::kStages - 1)) << "the first use of a stage is free";
  EXPECT_TRUE(wgmma_producer_waits(W::kStages));
  EXPECT_EQ(wgmma_empty_parity(W::kStages), 0u) << "waits for the first release";
  EXPECT_EQ(wgmma_empty_parity(2 * W::kStages + 3), 1u);
}

TEST(WgmmaRing, NoDeadlockNoEarlyReadNoOverwriteUnderRandomInterleavings) {
  for (int k_tiles : {1, 2, W::kStages - 1, W::kStages, W::kStages + 1, 13, 64})
    for (std::uint64_t seed = 1; seed <= 40; ++seed) {
      const std::string broken = run_ring(k_tiles, seed);
      EXPECT_EQ(broken, "") << k_tiles << " K tiles, seed " << seed;
      if (!broken.empty()) return;
    }
}

TEST(WgmmaRing, TheWalkCatchesABrokenProtocol) {
  for (Bug bug : {Bug::kProducerNeverWaits, Bug::kConsumerWaitsForTheWrongParity}) {
    int caught = 0;
    for (std::uint64_t seed = 1; seed <= 40; ++seed) caught += !run_ring(13, seed, bug).empty();
    EXPECT_GT(caught, 0) << "bug " << int(bug) << " went unnoticed in 40 interleavings";
  }
}

TEST(WgmmaRing, TheBarrierModelFollowsThePtxRules) {
  Barrier empty(W::kConsumers);
  EXPECT_FALSE(empty.try_wait_parity(0)) << "no release has happened yet";
  EXPECT_TRUE(empty.try_wait_parity(1)) << "a fresh barrier's 'previous phase' counts as done";
  empty.arrive();
  EXPECT_FALSE(empty.try_wait_parity(0)) << "one of two consumers is not a release";
  empty.arrive();
  EXPECT_TRUE(empty.try_wait_parity(0));
  EXPECT_FALSE(empty.try_wait_parity(1));
  Barrier full(1);
  full.arrive_expect_tx(100);
  EXPECT_FALSE(full.try_wait_parity(0)) << "arrived, but the bytes have not landed";
  full.complete_tx(100);
  EXPECT_TRUE(full.try_wait_parity(0));
}

}  // namespace
}  // namespace book::gemm_cuda
