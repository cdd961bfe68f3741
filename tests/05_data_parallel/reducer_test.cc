// Graded: ddp.overlapped_all_reduce. Buckets launch the moment they are complete, strictly in
// index order; a range reported twice or never is an error naming the bucket; on a real backward
// pass the overlapped all-reduces start before backward ends and give exactly the blocking
// all-reduce's bits.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "chapters/03_collectives/async.h"
#include "chapters/03_collectives/threads.h"
#include "chapters/04_training_baseline/data.h"
#include "chapters/04_training_baseline/model.h"
#include "chapters/05_data_parallel/gradient_sync.h"
#include "chapters/05_data_parallel/reducer.h"
#include "common/testing/exercise.h"
#include "common/testing/expect_error.h"

namespace book::ddp {
namespace {

using book::testing::expect_error;

EXERCISE_TEST("ddp.overlapped_all_reduce", Reducer, LaunchesCompleteBucketsInIndexOrder) {
  coll::run_ranks(1, [](coll::Communicator& comm) {
    coll::AsyncCommunicator async(comm);
    std::vector<float> grads(100, 1.0f);
    std::vector<std::size_t> launched;
    BucketReducer reducer({{60, 100}, {20, 60}, {0, 20}}, [&](std::size_t i, const FlatRange& b) {
      launched.push_back(i);
      return async.all_reduce(std::span<float>(grads).subspan(b.begin, b.size()));
    });
    reducer.begin_pass();
    reducer.mark_ready(90, 100);
    EXPECT_EQ(reducer.launched(), 0u) << "bucket 0 [60, 100) has 10 of 40 elements ready";
    EXPECT_EQ(reducer.ready(0), 10u);
    reducer.mark_ready(55, 90);  // completes bucket 0, starts bucket 1
    EXPECT_EQ(reducer.launched(), 1u) << "bucket 0 is complete: it starts at once";
    EXPECT_EQ(reducer.ready(1), 5u);
    reducer.mark_ready(0, 20);
    EXPECT_EQ(reducer.launched(), 1u)
        << "bucket 2 is complete but bucket 1 is not: every rank must start them in order";
    reducer.mark_ready(20, 55);
    EXPECT_EQ(reducer.launched(), 3u) << "bucket 1 completes: it and bucket 2 start";
    reducer.finish();
    EXPECT_EQ(launched, (std::vector<std::size_t>{0, 1, 2}));
    // A second pass starts from nothing.
    reducer.begin_pass();
    EXPECT_EQ(reducer.launched(), 0u);
    reducer.mark_ready(0, 100);
    reducer.finish();
    EXPECT_EQ(launched.size(), 6u);
  });
}

EXERCISE_TEST("ddp.overlapped_all_reduce", Reducer, RangesReportedTwiceOrNeverAreErrors) {
  coll::run_ranks(1, [](coll::Communicator& comm) {
    coll::AsyncCommunicator async(comm);
    std::vector<float> grads(100, 1.0f);
    BucketReducer reducer({{60, 100}, {20, 60}, {0, 20}}, [&](std::size_t, const FlatRange& b) {
      return async.all_reduce(std::span<float>(grads).subspan(b.begin, b.size()));
    });
    reducer.begin_pass();
    reducer.mark_ready(70, 100);
    expect_error([&] { reducer.mark_ready(80, 100); },
                 {"bucket 0 [60, 100) would have 50 of its 40 elements ready",
                  "a range was reported twice in one pass"});
    reducer.mark_ready(60, 70);  // the failed call counted nothing: this completes bucket 0
    EXPECT_EQ(reducer.launched(), 1u);
    reducer.mark_ready(0, 60);
    reducer.finish();
    reducer.begin_pass();
    reducer.mark_ready(30, 100);
    expect_error([&] { reducer.finish(); },
                 {"bucket 1 [20, 60) was never launched", "only 30 of its 40 elements"});
  });
}

// Rank r's batch: its own rows of addition problems.
train::Batch rank_batch_of(int rank, int rows) {
  const train::AdditionTask task(2);
  Rng rng(500 + static_cast<std::uint64_t>(rank));
  return task.batch(rng, train::Split::kTrain, rows);
}

EXERCISE_TEST("ddp.overlapped_all_reduce", Reducer, OverlapsBackwardWithTheBlockingResult) {
  train::Config config;
  config.n_layer = 3, config.n_head = 2, config.d_model = 16, config.vocab_size = 12;
  config.context = train::AdditionTask(2).model_context();
  for (int n : {2, 3}) {
    coll::run_ranks(n, [&](coll::Communicator& comm) {
      const std::string who = "N=" + std::to_string(n) + " rank " + std::to_string(comm.rank());
      train::Model<float> model(config, 4);
      model.init(7);
      const train::Batch batch = rank_batch_of(comm.rank(), 4);
      const auto buckets = plan_buckets(tensor_ranges(model.layout()), 2000, sizeof(float));
      ASSERT_GE(buckets.size(), 3u) << who;
      // The reference: plain backward, then blocking all-reduces of the same buckets.
      model.zero_grad();
      model.forward(batch.tokens.data(), batch.targets.data(), batch.batch, batch.seq_len);
      model.backward();
      std::vector<float> expected(model.grads().begin(), model.grads().end());
      for (const FlatRange& b : buckets)
        comm.all_reduce(std::span<float>(expected).subspan(b.begin, b.size()), coll::ReduceOp::kAvg,
                        coll::Algorithm::kRing);
      // Overlapped: buckets start from the hook while backward goes on.
      coll::AsyncCommunicator async(comm);
      int hook_calls = 0, calls_at_first_launch = -1;
      BucketReducer reducer(buckets, [&](std::size_t, const FlatRange& b) {
        if (calls_at_first_launch < 0) calls_at_first_launch = hook_calls;
        return async.all_reduce(model.grads().span().subspan(b.begin, b.size()),
                                coll::ReduceOp::kAvg, coll::Algorithm::kRing);
      });
      model.zero_grad();
      model.forward(batch.tokens.data(), batch.targets.data(), batch.batch, batch.seq_len);
      reducer.begin_pass();
      const auto hook = reducer.hook();
      model.backward(1.0f, [&](std::size_t begin, std::size_t end) {
        ++hook_calls;
        hook(begin, end);
      });
      reducer.finish();
      EXPECT_EQ(reducer.launched(), buckets.size()) << who;
      EXPECT_GT(calls_at_first_launch, 0) << who;
      EXPECT_LT(calls_at_first_launch, hook_calls)
          << who << ": the first bucket must start before backward reports its last layer";
      EXPECT_EQ(std::memcmp(expected.data(), model.grads().data(), model.grads().bytes()), 0)
          << who << ": overlapped buckets must give the blocking all-reduce's bits";
    });
  }
}

}  // namespace
}  // namespace book::ddp
