// The MPI backend, run as real processes: mpi_test() (chapters/03_collectives/testing/mpi.bzl)
// starts N copies with mpirun. The book's ring next to MPI's own collectives, exact byte counts,
// split, and errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "chapters/03_collectives/async.h"
#include "chapters/03_collectives/mpi.h"
#include "chapters/03_collectives/testing/collective_testing.h"
#include "common/testing/expect_error.h"

namespace book::coll {
namespace {

using testing::expect_close;
using testing::rank_input;
using testing::reference;
using testing::tolerance;
using testing::TypedBuffer;

TEST(Mpi, RingTreeNaiveAndNativeAgreeWithTheReference) {
  MpiCommunicator comm;
  const int n = comm.size();
  for (std::size_t count : testing::awkward_counts(n)) {
    for (Algorithm algo : {Algorithm::kRing, Algorithm::kRingFused, Algorithm::kTree,
                           Algorithm::kNaive, Algorithm::kNative}) {
      for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kAvg, ReduceOp::kMax}) {
        const auto expected = reference(count, DType::kF32, n, 31, op);
        TypedBuffer data = rank_input(count, DType::kF32, comm.rank(), 31);
        comm.all_reduce(data.view(), op, algo);
        expect_close(data, expected, 0, count, tolerance(DType::kF32, n),
                     std::string(algorithm_name(algo)) + " " +
                         testing::label(n, count, DType::kF32, op) + " rank " +
                         std::to_string(comm.rank()));
      }
    }
  }
}

TEST(Mpi, NativeAndRingInFp64) {
  MpiCommunicator comm;
  const int n = comm.size();
  for (Algorithm algo : {Algorithm::kNative, Algorithm::kRing}) {
    for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kAvg}) {
      TypedBuffer data = rank_input(1037, DType::kF64, comm.rank(), 34);
      comm.all_reduce(data.view(), op, algo);
      expect_close(data, reference(1037, DType::kF64, n, 34, op), 0, 1037,
                   tolerance(DType::kF64, n), std::string(algorithm_name(algo)) + " f64");
    }
  }
  TypedBuffer half = rank_input(8, DType::kBF16, comm.rank(), 35);
  book::testing::expect_error(
      [&] { comm.all_reduce(half.view(), ReduceOp::kSum, Algorithm::kNative); },
      {"MPI has no bf16 reduction"});
}

TEST(Mpi, RingSendsTheTextbookVolumeExactly) {
  MpiCommunicator comm;
  const int n = comm.size(), r = comm.rank();
  for (std::size_t count : {std::size_t{1000}, std::size_t{1037}, std::size_t(n - 1)}) {
    TypedBuffer data = rank_input(count, DType::kBF16, r, 32);
    comm.reset_counters();
    comm.all_reduce(data.view(), ReduceOp::kSum, Algorithm::kRing);
    EXPECT_EQ(comm.counters().bytes_sent,
              2 * (testing::ring_rs_sent(count, n, r) + testing::ring_ag_sent(count, n, r)))
        << "N=" << n << " count=" << count << " rank " << r;
    const auto expected = reference(count, DType::kBF16, n, 32, ReduceOp::kSum);
    expect_close(data, expected, 0, count, tolerance(DType::kBF16, n), "bf16 ring over MPI");
  }
}

TEST(Mpi, ReduceScatterAllGatherNativeAndRing) {
  MpiCommunicator comm;
  const int n = comm.size(), r = comm.rank();
  const std::size_t count = 1037;
  const Shard mine = shard_of(count, n, r);
  const auto expected = reference(count, DType::kF32, n, 33, ReduceOp::kSum);
  const std::vector<double> my_part(expected.begin() + mine.offset,
                                    expected.begin() + mine.offset + mine.count);
  for (Algorithm algo : {Algorithm::kRing, Algorithm::kNative}) {
    TypedBuffer input = rank_input(count, DType::kF32, r, 33), shard(mine.count, DType::kF32);
    shard.poison();
    comm.reduce_scatter(input.view(), shard.view(), ReduceOp::kSum, algo);
    expect_close(shard, my_part, 0, mine.count, tolerance(DType::kF32, n), algorithm_name(algo));
    TypedBuffer full(count, DType::kF32);
    full.poison();
    comm.all_gather(shard.view(), full.view(), algo);
    expect_close(full, expected, 0, count, tolerance(DType::kF32, n), algorithm_name(algo));
  }
}

TEST(Mpi, AllToAllBroadcastSplitBarrier) {
  MpiCommunicator comm;
  const int n = comm.size(), r = comm.rank();
  std::vector<std::size_t> send(n), recv(n);
  for (int j = 0; j < n; ++j) {
    send[j] = static_cast<std::size_t>(r + 2 * j + 1);  // uneven: depends on both ranks
    recv[j] = static_cast<std::size_t>(j + 2 * r + 1);
  }
  std::vector<float> in, out;
  for (int j = 0; j < n; ++j)
    for (std::size_t i = 0; i < send[j]; ++i) in.push_back(static_cast<float>(100 * r + j));
  for (int j = 0; j < n; ++j) out.insert(out.end(), recv[j], -1.0f);
  comm.all_to_all(std::span<const float>(in), send, std::span<float>(out), recv);
  std::size_t at = 0;
  for (int j = 0; j < n; ++j)
    for (std::size_t i = 0; i < recv[j]; ++i, ++at)
      ASSERT_EQ(out[at], static_cast<float>(100 * j + r)) << "block from rank " << j;
  std::vector<float> b(77, static_cast<float>(r));
  comm.broadcast(std::span<float>(b), n - 1);
  EXPECT_EQ(b[76], static_cast<float>(n - 1));
  auto half = comm.split(r % 2, r);
  ASSERT_NE(half, nullptr);
  std::vector<float> x = {1.0f};
  half->all_reduce(std::span<float>(x), ReduceOp::kSum, Algorithm::kRing);
  EXPECT_EQ(x[0], static_cast<float>(half->size()));
  comm.barrier();
}

TEST(Mpi, ARankThatNeverArrivesTimesOutWithItsName) {
  MpiCommunicator world;
  if (world.size() < 2) GTEST_SKIP() << "needs 2 ranks";
  // A fresh communicator, so that the orphaned message of the timed-out call goes nowhere else.
  auto comm = world.split(0, world.rank());
  comm->set_timeout(std::chrono::milliseconds(300));
  if (comm->rank() == 0) {
    std::vector<float> data(10, 1.0f);
    book::testing::expect_error(
        [&] { comm->all_reduce(std::span<float>(data), ReduceOp::kSum, Algorithm::kRing); },
        {"all_reduce(ring", "timed out after 300 ms",
         "waiting for rank " + std::to_string(comm->size() - 1)});
  }
  world.barrier();  // rank 1.. never joined that all_reduce
}

// A pipeline's 1F1B has neighbours that both send before they receive. Above MPI's eager limit
// (4 KiB through shared memory) a send that waited for its receiver deadlocked there, until the
// timeout; send returns at once now, as on the threads backend.
TEST(Mpi, NeighboursThatBothSendFirstDoNotDeadlock) {
  MpiCommunicator world;
  if (world.size() < 2) GTEST_SKIP() << "needs 2 ranks";
  auto comm = world.split(0, world.rank());
  comm->set_timeout(std::chrono::milliseconds(5000));
  const int r = comm->rank(), n = comm->size();
  const int next = (r + 1) % n, previous = (r + n - 1) % n;
  for (std::size_t count : {std::size_t{16}, std::size_t{1} << 18}) {  // 64 B and 1 MiB
    std::vector<float> mine(count, static_cast<float>(r)), theirs(count, -1.0f);
    comm->send(std::span<const float>(mine), next, 7);
    std::fill(mine.begin(), mine.end(), -2.0f);  // the send's bytes were copied: no effect
    comm->recv(std::span<float>(theirs), previous, 7);
    EXPECT_EQ(theirs, std::vector<float>(count, static_cast<float>(previous))) << count;
  }
  comm->barrier();
}

TEST(Mpi, NonBlockingCollectivesRunOnTheirOwnThread) {
  MpiCommunicator comm;
  const int n = comm.size(), r = comm.rank();
  AsyncCommunicator async(comm);  // needs MPI_THREAD_MULTIPLE, which MpiSession asked for
  std::vector<TypedBuffer> buckets;
  std::vector<CollectiveHandle> handles;
  for (int b = 0; b < 4; ++b) {
    buckets.push_back(rank_input(300 + 77 * b, DType::kF32, r, 40 + b));
    handles.push_back(async.all_reduce(buckets.back().view(), ReduceOp::kSum, Algorithm::kRing));
  }
  // Meanwhile this thread calls MPI too, on the caller's communicator.
  TypedBuffer other = rank_input(501, DType::kBF16, r, 45);
  comm.all_reduce(other.view(), ReduceOp::kSum, Algorithm::kRing);
  expect_close(other, reference(501, DType::kBF16, n, 45, ReduceOp::kSum), 0, 501,
               tolerance(DType::kBF16, n), "blocking bf16 next to the non-blocking ones");
  for (int b = 0; b < 4; ++b) {
    handles[b].wait();
    const std::size_t count = 300 + 77 * b;
    expect_close(buckets[b], reference(count, DType::kF32, n, 40 + b, ReduceOp::kSum), 0, count,
                 tolerance(DType::kF32, n), handles[b].name() + " rank " + std::to_string(r));
  }
}

TEST(Mpi, ANonBlockingTimeoutSurfacesAtWait) {
  MpiCommunicator world;
  if (world.size() < 2) GTEST_SKIP() << "needs 2 ranks";
  auto comm = world.split(0, world.rank());  // a fresh group for the orphaned messages
  comm->set_timeout(std::chrono::milliseconds(300));
  {
    AsyncCommunicator async(*comm);
    if (comm->rank() == 0) {  // the others never start it
      std::vector<float> data(10, 1.0f);
      CollectiveHandle handle =
          async.all_reduce(std::span<float>(data), ReduceOp::kSum, Algorithm::kRing);
      book::testing::expect_error(
          [&] { handle.wait(); },
          {"non-blocking all_reduce #1 (10 x f32) failed", "timed out after 300 ms"});
    }
  }
  world.barrier();
}

}  // namespace
}  // namespace book::coll
