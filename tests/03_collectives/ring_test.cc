// Graded tests of coll.ring_reduce_scatter, coll.ring_all_gather and coll.ring_all_reduce: values
// against a double-precision reference and the bytes each rank sent, pinned exactly.
#include <gtest/gtest.h>

#include <bit>

#include "chapters/03_collectives/algorithms.h"
#include "chapters/03_collectives/testing/collective_testing.h"
#include "common/testing/exercise.h"

namespace book::coll {
namespace {

using testing::awkward_counts;
using testing::expect_close;
using testing::kWorldSizes;
using testing::label;
using testing::rank_input;
using testing::reference;
using testing::tolerance;
using testing::TypedBuffer;

EXERCISE_TEST("coll.ring_reduce_scatter", RingReduceScatter, OwnChunkIsReducedAndBytesExact) {
  for (int n : kWorldSizes) {
    for (std::size_t count : awkward_counts(n)) {
      for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kAvg, ReduceOp::kMax}) {
        const auto expected = reference(count, DType::kF32, n, 11, op);
        run_ranks(n, [&](Communicator& comm) {
          TypedBuffer data = rank_input(count, DType::kF32, comm.rank(), 11);
          ring_reduce_scatter(comm, data.view(), op);
          const Shard mine = shard_of(count, n, comm.rank());
          expect_close(data, expected, mine.offset, mine.offset + mine.count,
                       tolerance(DType::kF32, n), label(n, count, DType::kF32, op));
          EXPECT_EQ(comm.counters().bytes_sent, 4 * testing::ring_rs_sent(count, n, comm.rank()))
              << label(n, count, DType::kF32, op) << " rank " << comm.rank()
              << ": a ring reduce-scatter sends every chunk but the rank's own, once";
          EXPECT_EQ(comm.counters().messages_sent, static_cast<std::uint64_t>(n - 1))
              << label(n, count, DType::kF32, op) << ": N-1 ring steps, one message each";
        });
      }
    }
  }
}

EXERCISE_TEST("coll.ring_reduce_scatter", RingReduceScatter, ThroughTheCommunicatorInBf16) {
  for (int n : kWorldSizes) {
    for (std::size_t count : awkward_counts(n)) {
      const auto expected = reference(count, DType::kBF16, n, 12, ReduceOp::kSum);
      run_ranks(n, [&](Communicator& comm) {
        TypedBuffer input = rank_input(count, DType::kBF16, comm.rank(), 12);
        const Shard mine = shard_of(count, n, comm.rank());
        TypedBuffer output(mine.count, DType::kBF16);
        output.poison();
        comm.reduce_scatter(input.view(), output.view(), ReduceOp::kSum, Algorithm::kRing);
        const std::vector<double> my_part(expected.begin() + mine.offset,
                                          expected.begin() + mine.offset + mine.count);
        expect_close(
            output, my_part, 0, mine.count, tolerance(DType::kBF16, n),
            label(n, count, DType::kBF16, ReduceOp::kSum) + " rank " + std::to_string(comm.rank()));
      });
    }
  }
}

EXERCISE_TEST("coll.ring_all_gather", RingAllGather, EveryChunkArrivesAndBytesExact) {
  for (int n : kWorldSizes) {
    for (std::size_t count : awkward_counts(n)) {
      // Rank r's chunk holds rank r's input values there; everything else starts as NaN.
      std::vector<double> expected(count);
      for (int r = 0; r < n; ++r) {
        const TypedBuffer in = rank_input(count, DType::kF16, r, 13);
        const Shard s = shard_of(count, n, r);
        for (std::size_t i = s.offset; i < s.offset + s.count; ++i) expected[i] = in.get(i);
      }
      run_ranks(n, [&](Communicator& comm) {
        const TypedBuffer in = rank_input(count, DType::kF16, comm.rank(), 13);
        TypedBuffer data(count, DType::kF16);
        data.poison();
        const Shard mine = shard_of(count, n, comm.rank());
        for (std::size_t i = mine.offset; i < mine.offset + mine.count; ++i) data.set(i, in.get(i));
        ring_all_gather(comm, data.view());
        expect_close(
            data, expected, 0, count, 0.0,
            label(n, count, DType::kF16, ReduceOp::kSum) + " rank " + std::to_string(comm.rank()));
        EXPECT_EQ(comm.counters().bytes_sent, 2 * testing::ring_ag_sent(count, n, comm.rank()))
            << "N=" << n << " count=" << count << " rank " << comm.rank()
            << ": a ring all-gather sends every chunk but chunk (r+1) mod N, once";
      });
    }
  }
}

EXERCISE_TEST("coll.ring_all_gather", RingAllGather, ThroughTheCommunicatorPoisonedOutput) {
  for (int n : kWorldSizes) {
    const std::size_t count = 1037;
    std::vector<double> expected(count);
    for (int r = 0; r < n; ++r) {
      const TypedBuffer in = rank_input(count, DType::kF32, r, 14);
      const Shard s = shard_of(count, n, r);
      for (std::size_t i = s.offset; i < s.offset + s.count; ++i) expected[i] = in.get(i);
    }
    run_ranks(n, [&](Communicator& comm) {
      const TypedBuffer full = rank_input(count, DType::kF32, comm.rank(), 14);
      const Shard mine = shard_of(count, n, comm.rank());
      TypedBuffer shard(mine.count, DType::kF32);
      for (std::size_t i = 0; i < mine.count; ++i) shard.set(i, full.get(mine.offset + i));
      TypedBuffer output(count, DType::kF32);
      output.poison();
      comm.all_gather(shard.view(), output.view(), Algorithm::kRing);
      expect_close(output, expected, 0, count, 0.0, "N=" + std::to_string(n));
    });
  }
}

EXERCISE_TEST("coll.ring_all_reduce", RingAllReduce, AllOpsAllSizesAndTheTextbookVolume) {
  for (int n : kWorldSizes) {
    for (std::size_t count : awkward_counts(n)) {
      for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kAvg, ReduceOp::kMax}) {
        const auto expected = reference(count, DType::kF32, n, 15, op);
        run_ranks(n, [&](Communicator& comm) {
          TypedBuffer data = rank_input(count, DType::kF32, comm.rank(), 15);
          ring_all_reduce(comm, data.view(), op);
          const std::string what =
              label(n, count, DType::kF32, op) + " rank " + std::to_string(comm.rank());
          expect_close(data, expected, 0, count, tolerance(DType::kF32, n), what);
          const std::uint64_t sent = 4 * (testing::ring_rs_sent(count, n, comm.rank()) +
                                          testing::ring_ag_sent(count, n, comm.rank()));
          EXPECT_EQ(comm.counters().bytes_sent, sent) << what;
          // Received: every chunk but (r-1)'s in the first half, every chunk but r's in the second.
          const std::uint64_t received =
              4 * (2 * count - shard_of(count, n, (comm.rank() + n - 1) % n).count -
                   shard_of(count, n, comm.rank()).count);
          EXPECT_EQ(comm.counters().bytes_received, received) << what;
          if (count % n == 0) {  // the textbook 2(N-1)/N·S, exactly
            EXPECT_EQ(comm.counters().bytes_sent * n, 2u * (n - 1) * 4 * count) << what;
          }
        });
      }
    }
  }
}

EXERCISE_TEST("coll.ring_all_reduce", RingAllReduce, HalfPrecisionAccumulatesInFp32) {
  for (DType dtype : {DType::kBF16, DType::kF16}) {
    for (int n : kWorldSizes) {
      const std::size_t count = 1037;
      const auto expected = reference(count, dtype, n, 16, ReduceOp::kSum);
      run_ranks(n, [&](Communicator& comm) {
        TypedBuffer data = rank_input(count, dtype, comm.rank(), 16);
        ring_all_reduce(comm, data.view(), ReduceOp::kSum);
        expect_close(data, expected, 0, count, tolerance(dtype, n),
                     label(n, count, dtype, ReduceOp::kSum));
        EXPECT_EQ(comm.counters().bytes_sent, 2 * (testing::ring_rs_sent(count, n, comm.rank()) +
                                                   testing::ring_ag_sent(count, n, comm.rank())));
      });
    }
  }
}

EXERCISE_TEST("coll.ring_all_reduce", RingAllReduce, EveryRankEndsWithIdenticalBits) {
  // The all-gather copies finished chunks, so all ranks agree bit for bit (DDP relies on it).
  for (int n : {3, 5, 8}) {
    const std::size_t count = 999;
    const auto results = testing::collect_ranks(n, [&](Communicator& comm) {
      TypedBuffer data = rank_input(count, DType::kF32, comm.rank(), 17);
      comm.all_reduce(data.view(), ReduceOp::kSum, Algorithm::kRing);
      return data.floats();
    });
    testing::expect_identical_on_every_rank(results, "N=" + std::to_string(n));
  }
}

EXERCISE_TEST("coll.ring_fused_all_reduce", RingFusedAllReduce, SameBytesSameBitsAsTheRing) {
  for (int n : kWorldSizes) {
    for (std::size_t count : awkward_counts(n)) {
      for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kAvg, ReduceOp::kMax}) {
        const auto expected = reference(count, DType::kBF16, n, 18, op);
        run_ranks(n, [&](Communicator& comm) {
          const std::string what =
              label(n, count, DType::kBF16, op) + " rank " + std::to_string(comm.rank());
          TypedBuffer fused = rank_input(count, DType::kBF16, comm.rank(), 18);
          if (count % 2) {  // directly, and through the Communicator's dispatch
            ring_fused_all_reduce(comm, fused.view(), op);
          } else {
            comm.all_reduce(fused.view(), op, Algorithm::kRingFused);
          }
          expect_close(fused, expected, 0, count, tolerance(DType::kBF16, n), what);
          EXPECT_EQ(comm.counters().bytes_sent, 2 * (testing::ring_rs_sent(count, n, comm.rank()) +
                                                     testing::ring_ag_sent(count, n, comm.rank())))
              << what << ": fusing changes where bytes go in memory, not what crosses the link";
          EXPECT_EQ(comm.counters().messages_sent, 2u * (n - 1)) << what;
          TypedBuffer plain = rank_input(count, DType::kBF16, comm.rank(), 18);
          comm.all_reduce(plain.view(), op, Algorithm::kRing);
          for (std::size_t i = 0; i < count; ++i) {
            if (std::bit_cast<std::uint64_t>(fused.get(i)) !=
                std::bit_cast<std::uint64_t>(plain.get(i))) {
              ADD_FAILURE() << what << ": element " << i << " is " << fused.get(i) << " fused but "
                            << plain.get(i) << " unfused; the additions should "
                            << "happen in the same order";
              break;
            }
          }
        });
      }
    }
  }
}

}  // namespace
}  // namespace book::coll
