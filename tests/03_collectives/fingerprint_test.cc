// Issue 19: ranks that pass the same bytes as different element types, or different reduce
// operations, roots or collectives, got garbage or disagreeing results with no error. The
// fingerprint check (Communicator::set_fingerprint_check, on in every `bazel test`) refuses them
// on every rank before any data moves, and costs the counted traffic nothing.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "chapters/03_collectives/testing/collective_testing.h"
#include "common/dtype.h"
#include "common/testing/expect_error.h"

namespace book::coll {
namespace {

using book::testing::expect_error;
using testing::kWorldSizes;

TEST(Fingerprint, TheSameBytesAsAnotherTypeAreRefusedOnEveryRank) {
  // 32 bf16 on rank 1, 16 f32 elsewhere: 64 bytes on every rank, so the messages fit.
  for (const Algorithm algorithm : {Algorithm::kRing, Algorithm::kTree, Algorithm::kNaive}) {
    SCOPED_TRACE(algorithm_name(algorithm));
    std::vector<std::string> errors(4);
    expect_error(
        [&] {
          run_ranks(4, [&](Communicator& comm) {
            comm.set_fingerprint_check(true);
            std::vector<float> f32(16, 1.0f);
            std::vector<BFloat16> bf16(32, to_bf16(1.0f));
            try {
              if (comm.rank() == 1)
                comm.all_reduce(std::span<BFloat16>(bf16), ReduceOp::kSum, algorithm);
              else
                comm.all_reduce(std::span<float>(f32), ReduceOp::kSum, algorithm);
            } catch (const Error& e) {
              errors[comm.rank()] = e.what();
              throw;
            }
          });
        },
        {"the ranks disagree about the collective (fingerprint check)",
         "rank 0 calls all_reduce(16 x f32, sum); rank 1 calls all_reduce(32 x bf16, sum)"});
    for (int r = 0; r < 4; ++r)
      EXPECT_NE(errors[r].find("rank 1 calls all_reduce(32 x bf16, sum)"), std::string::npos)
          << "rank " << r << " did not name the disagreement, it said: " << errors[r];
  }
}

TEST(Fingerprint, OperationsRootsAndCollectivesThatDifferAreRefused) {
  expect_error(
      [] {
        run_ranks(3, [](Communicator& comm) {
          comm.set_fingerprint_check(true);
          std::vector<float> data(10, 1.0f);
          comm.all_reduce(std::span<float>(data),
                          comm.rank() == 2 ? ReduceOp::kMax : ReduceOp::kSum);
        });
      },
      {"rank 0 calls all_reduce(10 x f32, sum); rank 2 calls all_reduce(10 x f32, max)"});
  expect_error(
      [] {
        run_ranks(5, [](Communicator& comm) {
          comm.set_fingerprint_check(true);
          std::vector<double> data(7, 2.0);
          comm.broadcast(std::span<double>(data), comm.rank() >= 3 ? 1 : 0);
        });
      },
      {"rank 0 calls broadcast(7 x f64, root 0); rank 3 calls broadcast(7 x f64, root 1); rank 4 "
       "calls broadcast(7 x f64, root 1)"});
  expect_error(
      [] {
        run_ranks(2, [](Communicator& comm) {
          comm.set_fingerprint_check(true);
          std::vector<float> data(4, 1.0f);
          if (comm.rank() == 0)
            comm.barrier();
          else
            comm.all_reduce(std::span<float>(data));
        });
      },
      {"rank 0 calls barrier(); rank 1 calls all_reduce(4 x f32, sum)"});
  // More than four disagreeing ranks are summed up, not listed.
  expect_error(
      [] {
        run_ranks(8, [](Communicator& comm) {
          comm.set_fingerprint_check(true);
          std::vector<float> data(comm.rank() == 0 ? 9 : 8, 1.0f);
          comm.all_reduce(std::span<float>(data));
        });
      },
      {"rank 4 calls all_reduce(8 x f32, sum); and 3 more ranks"});
}

// Without the check, the same call goes through and returns garbage: the check is what refuses it.
TEST(Fingerprint, OffItLetsTheMismatchThrough) {
  run_ranks(2, [](Communicator& comm) {
    comm.set_fingerprint_check(false);
    std::vector<float> f32(16, 1.0f);
    std::vector<BFloat16> bf16(32, to_bf16(1.0f));
    if (comm.rank() == 1)
      comm.all_reduce(std::span<BFloat16>(bf16), ReduceOp::kSum, Algorithm::kTree);
    else
      comm.all_reduce(std::span<float>(f32), ReduceOp::kSum, Algorithm::kTree);
  });
}

// Matching calls pass at every group size (Bruck's exchange at sizes that are not powers of two),
// and the counted traffic is the collective's own, whether the check is on or off.
TEST(Fingerprint, MatchingCallsPassAndTheCountersAreUnchanged) {
  for (const int n : kWorldSizes) {
    std::vector<Counters> with(n), without(n);
    for (const bool on : {true, false}) {
      run_ranks(n, [&](Communicator& comm) {
        comm.set_fingerprint_check(on);
        std::vector<float> data(1000, 1.0f), shard(shard_of(1000, n, comm.rank()).count);
        comm.all_reduce(std::span<float>(data), ReduceOp::kAvg);
        comm.reduce_scatter(std::span<const float>(data), std::span<float>(shard));
        comm.all_gather(std::span<const float>(shard), std::span<float>(data));
        comm.broadcast(std::span<float>(data), n - 1);
        comm.barrier();
        const auto child = comm.split(comm.rank() % 2, comm.rank());
        EXPECT_EQ(child->fingerprint_check(), on) << "a split group inherits the check";
        (on ? with : without)[comm.rank()] = comm.counters();
      });
    }
    for (int r = 0; r < n; ++r) {
      EXPECT_EQ(with[r].bytes_sent, without[r].bytes_sent) << n << " ranks, rank " << r;
      EXPECT_EQ(with[r].messages_sent, without[r].messages_sent) << n << " ranks, rank " << r;
      EXPECT_EQ(with[r].bytes_received, without[r].bytes_received) << n << " ranks, rank " << r;
    }
  }
}

TEST(Fingerprint, TheEnvironmentTurnsItOn) {
  const char* saved = std::getenv("BOOK_COLL_CHECK");
  const std::string previous = saved ? saved : "";
  ::setenv("BOOK_COLL_CHECK", "1", 1);
  EXPECT_TRUE(fingerprint_check_from_environment());
  run_ranks(2, [](Communicator& comm) { EXPECT_TRUE(comm.fingerprint_check()); });
  ::setenv("BOOK_COLL_CHECK", "0", 1);
  EXPECT_FALSE(fingerprint_check_from_environment());
  ::unsetenv("BOOK_COLL_CHECK");
  EXPECT_FALSE(fingerprint_check_from_environment());
  run_ranks(2, [](Communicator& comm) { EXPECT_FALSE(comm.fingerprint_check()); });
  if (saved) ::setenv("BOOK_COLL_CHECK", previous.c_str(), 1);
}

}  // namespace
}  // namespace book::coll
