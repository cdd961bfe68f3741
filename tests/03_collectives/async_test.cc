// Scaffolding: non-blocking collectives. Started, overlapped with other work, waited for: the same
// bits as the blocking call; several in flight run in the order started; a failure on another
// rank, or a timeout, surfaces at wait() naming the collective; destruction never hangs.
#include <gtest/gtest.h>

#include <bit>
#include <chrono>
#include <thread>

#include "chapters/03_collectives/async.h"
#include "chapters/03_collectives/testing/collective_testing.h"
#include "common/testing/expect_error.h"
#include "common/trace.h"

namespace book::coll {
namespace {

using namespace std::chrono_literals;
using book::testing::expect_error;
using testing::rank_input;
using testing::TypedBuffer;

// Adds a failure unless a and b hold the same bits.
void expect_same_bits(const TypedBuffer& a, const TypedBuffer& b, const std::string& what) {
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::bit_cast<std::uint64_t>(a.get(i)) != std::bit_cast<std::uint64_t>(b.get(i))) {
      ADD_FAILURE() << what << ": element " << i << " is " << a.get(i) << " non-blocking but "
                    << b.get(i) << " blocking";
      return;
    }
}

TEST(Async, StartComputeWaitGivesTheBlockingResult) {
  for (int n : {1, 2, 3, 4}) {
    for (DType dtype : {DType::kF32, DType::kBF16}) {
      const std::size_t count = 1037;
      run_ranks(n, [&](Communicator& comm) {
        const std::string what = "N=" + std::to_string(n) + " " + dtype_name(dtype) + " rank " +
                                 std::to_string(comm.rank());
        //! [async_overlap]
        AsyncCommunicator async(comm);
        TypedBuffer gradients = rank_input(count, dtype, comm.rank(), 71);
        CollectiveHandle handle = async.all_reduce(gradients.view(), ReduceOp::kAvg);
        // ... meanwhile this thread keeps working, here a blocking all-reduce on its own
        // communicator, in parallel with the one in flight on the communication thread ...
        TypedBuffer blocking = rank_input(count, dtype, comm.rank(), 71);
        comm.all_reduce(blocking.view(), ReduceOp::kAvg);
        handle.wait();  // now `gradients` holds the average over ranks
        //! [async_overlap]
        EXPECT_TRUE(handle.done()) << what;
        expect_same_bits(gradients, blocking, what + " all_reduce");
        const Shard mine = shard_of(count, n, comm.rank());
        TypedBuffer shard(mine.count, dtype), shard_blocking(mine.count, dtype);
        shard.poison();
        const TypedBuffer input = rank_input(count, dtype, comm.rank(), 72);
        CollectiveHandle rs = async.reduce_scatter(input.view(), shard.view(), ReduceOp::kSum);
        comm.reduce_scatter(input.view(), shard_blocking.view(), ReduceOp::kSum);
        rs.wait();
        expect_same_bits(shard, shard_blocking, what + " reduce_scatter");
        TypedBuffer gathered(count, dtype), gathered_blocking(count, dtype);
        gathered.poison();
        CollectiveHandle ag = async.all_gather(shard.view(), gathered.view());
        comm.all_gather(shard_blocking.view(), gathered_blocking.view());
        ag.wait();
        expect_same_bits(gathered, gathered_blocking, what + " all_gather");
        TypedBuffer root_data = rank_input(count, dtype, comm.rank(), 73);
        async.broadcast(root_data.view(), n - 1).wait();
        expect_same_bits(root_data, rank_input(count, dtype, n - 1, 73), what + " broadcast");
      });
    }
  }
}

TEST(Async, SeveralInFlightRunInTheOrderStarted) {
  constexpr int kRanks = 3, kBuckets = 6;
  Trace trace;
  ThreadsOptions options;
  options.trace = &trace;
  run_ranks(
      kRanks,
      [&](Communicator& comm) {
        AsyncCommunicator async(comm);
        std::vector<TypedBuffer> buckets;
        for (int b = 0; b < kBuckets; ++b)  // different sizes, so a swap could not go unnoticed
          buckets.push_back(rank_input(100 + 37 * b, DType::kF32, comm.rank(), 80 + b));
        std::vector<CollectiveHandle> handles;
        for (auto& bucket : buckets)
          handles.push_back(async.all_reduce(bucket.view(), ReduceOp::kSum, Algorithm::kRing));
        for (int b = kBuckets - 1; b >= 0; --b) handles[b].wait();  // any order of waits is fine
        for (int b = 0; b < kBuckets; ++b) {
          const std::size_t count = 100 + 37 * b;
          testing::expect_close(
              buckets[b], testing::reference(count, DType::kF32, kRanks, 80 + b, ReduceOp::kSum), 0,
              count, testing::tolerance(DType::kF32, kRanks), handles[b].name());
          EXPECT_EQ(handles[b].name(), "non-blocking all_reduce #" + std::to_string(b + 1) + " (" +
                                           std::to_string(count) + " x f32)");
        }
        async.wait_all();
        // The communication thread counted its own traffic: the ring's exact volume, per bucket.
        std::uint64_t sent = 0;
        for (int b = 0; b < kBuckets; ++b)
          sent += 4 * (testing::ring_rs_sent(100 + 37 * b, kRanks, comm.rank()) +
                       testing::ring_ag_sent(100 + 37 * b, kRanks, comm.rank()));
        EXPECT_EQ(async.communicator().counters().bytes_sent, sent);
        EXPECT_EQ(comm.counters().bytes_sent, 0u) << "the caller's communicator sent nothing";
        EXPECT_EQ(async.communicator().group(), "world/async");
      },
      options);
  // On every rank's "comm" lane the collectives ran one after another, in the order started.
  for (int r = 0; r < kRanks; ++r) {
    std::vector<Trace::Event> ran;
    for (const auto& e : trace.events())
      if (e.rank == r && e.lane == "comm" && e.category == "collective") ran.push_back(e);
    ASSERT_EQ(ran.size(), static_cast<std::size_t>(kBuckets)) << "rank " << r;
    for (int b = 0; b < kBuckets; ++b) {
      EXPECT_NE(ran[b].name.find(std::to_string(100 + 37 * b) + " x f32"), std::string::npos)
          << "rank " << r << ": collective " << b << " was " << ran[b].name;
      if (b > 0) {
        EXPECT_GE(ran[b].start_us, ran[b - 1].start_us + ran[b - 1].duration_us) << "rank " << r;
      }
    }
  }
}

TEST(Async, AFailureOnAnotherRankSurfacesAtWaitAndStopsWhatFollows) {
  expect_error(
      [] {
        run_ranks(3, [](Communicator& comm) {
          AsyncCommunicator async(comm);
          if (comm.rank() == 1) BOOK_CHECK(false, "rank one gave up");
          std::vector<float> first(100, 1.0f), second(50, 2.0f);
          CollectiveHandle a = async.all_reduce(std::span<float>(first));
          CollectiveHandle b = async.all_reduce(std::span<float>(second));
          expect_error([&] { a.wait(); }, {"non-blocking all_reduce #1 (100 x f32) failed",
                                           "group 'world/async'", "rank 1 failed"});
          expect_error([&] { b.wait(); }, {"non-blocking all_reduce #2 (50 x f32) did not run",
                                           "an earlier one failed (non-blocking all_reduce #1"});
          expect_error([&] { a.wait(); }, {"#1 (100 x f32) failed"});  // again, the same error
          expect_error([&] { async.wait_all(); }, {"#1 (100 x f32) failed"});
        });
      },
      {"rank one gave up"});
}

TEST(Async, ATimeoutSurfacesAtWaitNamingTheCollective) {
  ThreadsOptions options;
  options.timeout = 200ms;
  run_ranks(
      3,
      [](Communicator& comm) {
        AsyncCommunicator async(comm);
        if (comm.rank() == 1) {  // slow: never starts the collective in time
          std::this_thread::sleep_for(1500ms);
          return;
        }
        std::vector<float> data(100, 1.0f);
        CollectiveHandle handle =
            async.all_reduce(std::span<float>(data), ReduceOp::kSum, Algorithm::kRing);
        expect_error([&] { handle.wait(); },
                     {"non-blocking all_reduce #1 (100 x f32) failed", "timed out after 200 ms"});
      },
      options);
}

TEST(Async, DestructionFinishesWhatWasStarted) {
  std::vector<std::vector<CollectiveHandle>> handles(4);
  std::vector<std::vector<TypedBuffer>> data(4);
  run_ranks(4, [&](Communicator& comm) {
    auto& mine = data[comm.rank()];
    for (int b = 0; b < 3; ++b) mine.push_back(rank_input(211, DType::kF32, comm.rank(), 90 + b));
    AsyncCommunicator async(comm);
    for (auto& bucket : mine) handles[comm.rank()].push_back(async.all_reduce(bucket.view()));
  });  // every AsyncCommunicator went out of scope with its work started, none waited for
  for (int r = 0; r < 4; ++r)
    for (int b = 0; b < 3; ++b) {
      ASSERT_TRUE(handles[r][b].done()) << "rank " << r << " bucket " << b;
      handles[r][b].wait();
      testing::expect_close(data[r][b],
                            testing::reference(211, DType::kF32, 4, 90 + b, ReduceOp::kSum), 0, 211,
                            testing::tolerance(DType::kF32, 4), handles[r][b].name());
    }
}

TEST(Async, DestructionWithWorkThatCannotFinishFailsItWithoutHanging) {
  ThreadsOptions options;
  options.timeout = 300ms;
  const auto start = std::chrono::steady_clock::now();
  run_ranks(
      2,
      [](Communicator& comm) {
        if (comm.rank() == 1) {   // takes part in the two splits, never in the collectives
          comm.set_timeout(20s);  // and waits for rank 0's timeouts without timing out itself
          { AsyncCommunicator async(comm); }
          { AsyncCommunicator async(comm); }
          comm.barrier();
          return;
        }
        std::vector<float> first(64, 1.0f), second(64, 2.0f);
        CollectiveHandle a, b, c, d;
        {  // left normally: runs what was started; #1 times out, so #2 does not run
          AsyncCommunicator async(comm);
          a = async.all_reduce(std::span<float>(first));
          b = async.all_reduce(std::span<float>(second));
        }
        try {  // left by an exception: what had not started by then is cancelled
          AsyncCommunicator async(comm);
          c = async.all_reduce(std::span<float>(first));
          d = async.all_reduce(std::span<float>(second));
          throw Error("rank 0 gave up");
        } catch (const Error&) {
        }
        for (const CollectiveHandle* h : {&a, &b, &c, &d}) EXPECT_TRUE(h->done()) << h->name();
        expect_error([&] { a.wait(); }, {"#1 (64 x f32) failed", "timed out after 300 ms"});
        expect_error([&] { b.wait(); }, {"#2 (64 x f32) did not run", "an earlier one failed"});
        // #1 either started before the exception (and timed out) or was cancelled with #2.
        expect_error([&] { c.wait(); }, {"non-blocking all_reduce #1 (64 x f32)"});
        expect_error([&] { d.wait(); },
                     {"#2 (64 x f32) was cancelled", "destroyed by an exception"});
        comm.barrier();
      },
      options);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 15s) << "destruction should not hang";
}

TEST(Async, SubmitRunsAnyCallsOnTheThreadInStartOrder) {
  // A composition on the communication thread: a delay, then two collectives that must stay
  // together; queued between two plain all-reduces, it runs between them on every rank.
  constexpr int kRanks = 3;
  run_ranks(kRanks, [&](Communicator& comm) {
    AsyncCommunicator async(comm);
    TypedBuffer first = rank_input(257, DType::kF32, comm.rank(), 81);
    TypedBuffer second = rank_input(300, DType::kF32, comm.rank(), 82);
    TypedBuffer third = rank_input(64, DType::kF32, comm.rank(), 83);
    std::thread::id body_thread;
    CollectiveHandle a = async.all_reduce(first.view(), ReduceOp::kSum);
    CollectiveHandle b = async.submit("delayed pair (300 + 64 x f32)", [&](Communicator& inner) {
      body_thread = std::this_thread::get_id();
      std::this_thread::sleep_for(5ms);
      inner.all_reduce(second.view(), ReduceOp::kSum);
      inner.all_reduce(third.view(), ReduceOp::kMax);
    });
    CollectiveHandle c = async.all_reduce(first.view(), ReduceOp::kSum);  // after a: 3 × inputs
    EXPECT_EQ(b.name(), "non-blocking delayed pair (300 + 64 x f32) #2");
    c.wait();
    EXPECT_TRUE(a.done() && b.done()) << "collectives finish in the order started";
    EXPECT_NE(body_thread, std::this_thread::get_id()) << "the body runs on the thread";
    const auto sum2 = testing::reference(300, DType::kF32, kRanks, 82, ReduceOp::kSum);
    const auto max3 = testing::reference(64, DType::kF32, kRanks, 83, ReduceOp::kMax);
    testing::expect_close(second, sum2, 0, 300, testing::tolerance(DType::kF32, kRanks), "sum");
    testing::expect_close(third, max3, 0, 64, 0.0, "max");
    const auto once = testing::reference(257, DType::kF32, kRanks, 81, ReduceOp::kSum);
    std::vector<double> summed_again(once.size());
    for (std::size_t i = 0; i < once.size(); ++i) summed_again[i] = kRanks * once[i];
    testing::expect_close(first, summed_again, 0, 257,
                          4 * testing::tolerance(DType::kF32, kRanks) * 3,
                          "all_reduce of the all-reduced buffer");
  });
  run_ranks(2, [&](Communicator& comm) {
    AsyncCommunicator async(comm);
    CollectiveHandle failing = async.submit(
        "checked step", [](Communicator&) { throw Error("the body refused its input"); });
    expect_error([&] { failing.wait(); },
                 {"non-blocking checked step #1 failed", "the body refused its input"});
    expect_error([&] { async.submit("nothing", {}); }, "submit('nothing'): the body is empty");
  });
}

TEST(Async, AnEmptyHandleIsAnError) {
  const CollectiveHandle empty;
  EXPECT_FALSE(empty.done());
  expect_error([&] { empty.wait(); }, {"empty CollectiveHandle"});
}

}  // namespace
}  // namespace book::coll
