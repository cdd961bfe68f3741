// Graded tests of coll.all_to_all: uneven (and empty) splits, every block in its place, exact
// bytes.
#include <gtest/gtest.h>

#include <numeric>

#include "chapters/03_collectives/algorithms.h"
#include "chapters/03_collectives/testing/collective_testing.h"
#include "common/testing/exercise.h"
#include "common/testing/expect_error.h"

namespace book::coll {
namespace {

// How many elements rank `from` sends to rank `to`: seeded, uneven, sometimes zero.
std::size_t block(int from, int to, int n) {
  Rng rng(static_cast<std::uint64_t>(from * 131 + to * 7 + n));
  return static_cast<std::size_t>(rng.uniform_int(0, 9) < 2 ? 0 : rng.uniform_int(1, 37));
}

// The value of element i of the block from `from` to `to`: unique, so a misplaced block shows.
float value(int from, int to, std::size_t i) {
  return static_cast<float>(from * 10000 + to * 100) + static_cast<float>(i) * 0.5f + 0.25f;
}

void run_all_to_all(int n, bool through_communicator) {
  run_ranks(n, [&](Communicator& comm) {
    const int me = comm.rank();
    std::vector<std::size_t> send_counts(n), recv_counts(n);
    for (int j = 0; j < n; ++j) {
      send_counts[j] = block(me, j, n);
      recv_counts[j] = block(j, me, n);
    }
    std::vector<float> input,
        output(std::accumulate(recv_counts.begin(), recv_counts.end(), std::size_t{0}),
               std::numeric_limits<float>::quiet_NaN());
    for (int j = 0; j < n; ++j)
      for (std::size_t i = 0; i < send_counts[j]; ++i) input.push_back(value(me, j, i));
    if (through_communicator)
      comm.all_to_all(std::span<const float>(input), send_counts, std::span<float>(output),
                      recv_counts);
    else
      all_to_all(comm, std::span<const float>(input), send_counts, std::span<float>(output),
                 recv_counts);
    std::size_t at = 0;
    for (int j = 0; j < n; ++j) {
      for (std::size_t i = 0; i < recv_counts[j]; ++i, ++at) {
        if (output[at] != value(j, me, i)) {
          ADD_FAILURE() << "N=" << n << " rank " << me << ": element " << i << " of the block from "
                        << "rank " << j << " (output[" << at << "]) is " << output[at]
                        << ", expected " << value(j, me, i);
          return;
        }
      }
    }
    const std::uint64_t sent =
        4 *
        (std::accumulate(send_counts.begin(), send_counts.end(), std::size_t{0}) - send_counts[me]);
    EXPECT_EQ(comm.counters().bytes_sent, sent)
        << "N=" << n << " rank " << me << ": every block but the rank's own crosses once";
    EXPECT_EQ(comm.counters().messages_sent, static_cast<std::uint64_t>(n - 1))
        << "N=" << n << ": the pairwise exchange has N-1 steps";
  });
}

EXERCISE_TEST("coll.all_to_all", AllToAll, UnevenSplitsAllWorldSizes) {
  for (int n : testing::kWorldSizes) run_all_to_all(n, false);
}

EXERCISE_TEST("coll.all_to_all", AllToAll, ThroughTheCommunicator) {
  for (int n : testing::kWorldSizes) run_all_to_all(n, true);
}

EXERCISE_TEST("coll.all_to_all", AllToAll, MismatchedCountsAreAnErrorNotAHang) {
  // Both ranks send {3, 2} and expect {3, 2}: rank 1 expects 3 elements from rank 0, which
  // sends it 2, so the receive sees a message of the wrong size.
  book::testing::expect_error(
      [] {
        run_ranks(2, [](Communicator& comm) {
          std::vector<float> input(5, 1.0f), output(5);
          const std::vector<std::size_t> counts = {3, 2};
          comm.all_to_all(std::span<const float>(input), counts, std::span<float>(output), counts);
        });
      },
      {"all_to_all", "same counts"});
}

}  // namespace
}  // namespace book::coll
