// Scaffolding tests of the 3D composition: DP × TP × PP = 2 × 2 × 2 on 8 thread ranks (chapter
// 3's ProcessGrid), each stage a chapter-4 Model part holding its tensor-parallel slice of the
// blocks and of the vocabulary and communicating over the grid's tp() group (chapter 7's
// TensorParallelSeam over a TensorParallelGroup), gives the
// single-device step over both replicas' micro-batches: the loss and every gradient, gathered
// from the slices, to 1e-12 relative in double precision (the tensor-parallel all-reduces and the
// data-parallel average change the order of the sums), for GPipe, 1F1B and interleaved (v = 2).
// Bad degrees are refused with a message naming them.
#include <cmath>
#include <iostream>
#include <limits>
#include <mutex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "chapters/03_collectives/threads.h"
#include "chapters/04_training_baseline/parameter_copy.h"
#include "chapters/08_pipeline_parallel/executor.h"
#include "chapters/08_pipeline_parallel/registry.h"
#include "chapters/08_pipeline_parallel/three_d.h"
#include "common/testing/expect_error.h"

namespace book::pp {
namespace {

constexpr double kTolerance = 1e-12;  // relative, double precision

train::Config small_config() {
  train::Config c;
  c.vocab_size = 14, c.context = 7, c.n_layer = 4, c.n_head = 2, c.d_model = 8;
  return c;
}

void run_3d(const std::string& name, int m, int chunks_per_rank) {
  SCOPED_TRACE(name + ", dp × tp × pp = 2 × 2 × 2, m = " + std::to_string(m) +
               " per replica, v = " + std::to_string(chunks_per_rank));
  const train::Config config = small_config();
  const coll::GridDegrees degrees{2, 2, 2, 1};
  const int batch = 2, seq_len = 5;
  const auto all = random_micro_batches(config, degrees.dp * m, batch, seq_len, 91);
  train::Model<double> whole(config, batch);
  whole.init(92);
  const double want_loss = single_device_step(whole, all);
  const Schedule schedule = make_schedule(name, {degrees.pp, m, chunks_per_rank});

  std::mutex mutex;
  // Per replica, the slices of every rank put back in the whole layout (NaN: not held there).
  std::vector<std::vector<double>> assembled(
      degrees.dp,
      std::vector<double>(whole.layout().total(), std::numeric_limits<double>::quiet_NaN()));
  std::vector<double> losses(8, std::numeric_limits<double>::quiet_NaN());
  std::vector<int> tp_all_reduces(8, -1), stage(8, -1);
  coll::run_ranks(8, [&](coll::Communicator& world) {
    Rank3D<double> rank(world, degrees, config, batch, schedule.shape, 92);
    const int dp = rank.grid().coordinates().dp;
    const RankResult r = rank.step(schedule, std::span(all.data() + dp * m, m));
    const std::lock_guard<std::mutex> lock(mutex);
    losses[world.rank()] = r.loss;
    tp_all_reduces[world.rank()] = rank.tensor_parallel().counts().all_reduces;
    stage[world.rank()] = rank.grid().coordinates().pp;
    for (const auto& chunk : rank.chunks()) {
      EXPECT_EQ(chunk->part().tensor_parallel.size, 2) << "world rank " << world.rank();
      train::copy_to_whole<double>(chunk->layout(), chunk->grads().span(), whole.layout(),
                                   assembled[dp]);
    }
  });
  for (int r = 0; r < 8; ++r) {
    EXPECT_NEAR(losses[r], want_loss, kTolerance * std::fabs(want_loss))
        << "world rank " << r << ": loss " << losses[r] << ", one device " << want_loss;
    // Each of a rank's 2 blocks (in 1 or 2 chunks) all-reduces twice forward and twice backward
    // per micro-batch; the vocabulary-parallel embedding (first stage) once forward; the head
    // (last stage) once in the parallel cross-entropy and once for its input's gradient.
    EXPECT_EQ(tp_all_reduces[r], 2 * 4 * m + (stage[r] == 0 ? m : 2 * m)) << "world rank " << r;
  }
  double worst = 0;  // the largest relative gradient deviation, printed for the README
  for (int d = 0; d < degrees.dp; ++d)
    for (const auto& slot : whole.layout().slots())
      for (std::size_t i = slot.offset; i < slot.offset + slot.size(); ++i) {
        const double want = whole.grads()[i], got = assembled[d][i];
        worst = std::max(worst, std::fabs(got - want) / std::max(1.0, std::fabs(want)));
        ASSERT_FALSE(std::isnan(got)) << "replica " << d << ": " << slot.name << "["
                                      << i - slot.offset << "] is held by no rank";
        ASSERT_NEAR(got, want, kTolerance * std::max(1.0, std::fabs(want)))
            << "replica " << d << ": gradient of " << slot.name << "[" << i - slot.offset << "]";
      }
  std::cout << name << ": loss deviation "
            << std::fabs(losses[0] - want_loss) / std::fabs(want_loss)
            << ", largest gradient deviation " << worst << " (relative)\n";
}

TEST(ThreeD, GPipeOnTwoByTwoByTwoEqualsOneDevice) { run_3d("gpipe", 3, 1); }

TEST(ThreeD, OneFOneBOnTwoByTwoByTwoEqualsOneDevice) { run_3d("1f1b", 3, 1); }

TEST(ThreeD, InterleavedOnTwoByTwoByTwoEqualsOneDevice) { run_3d("interleaved", 4, 2); }

TEST(ThreeD, RefusesDegreesThatDoNotDivide) {
  const train::Config config = small_config();  // 2 heads, 4 layers
  testing::expect_error(
      [&] {
        check_3d(config, {2, 2, 2, 1}, 6, {2, 3, 1});
      },
      {"dp × tp × pp = 2 × 2 × 2 = 8", "is not the 6 ranks"});
  testing::expect_error(
      [&] {
        check_3d(config, {1, 4, 2, 1}, 8, {2, 3, 1});
      },
      {"tensor-parallel degree 4 does not divide the 2 heads"});
  train::Config odd_vocabulary = config;
  odd_vocabulary.vocab_size = 13;
  testing::expect_error(
      [&] {
        check_3d(odd_vocabulary, {2, 2, 2, 1}, 8, {2, 3, 1});
      },
      {"tensor-parallel degree 2 does not divide the vocabulary of 13 tokens",
       "pad the vocabulary"});
  testing::expect_error(
      [&] {
        check_3d(config, {2, 1, 3, 1}, 6, {3, 3, 1});
      },
      {"4 layers do not divide into pp × v = 3 stages"});
  testing::expect_error(
      [&] {
        check_3d(config, {2, 2, 2, 1}, 8, {4, 4, 1});
      },
      {"p = 4 stages, the grid pp = 2"});
  // Refused on every rank alike, before the grid is built.
  testing::expect_error(
      [&] {
        coll::run_ranks(8, [&](coll::Communicator& world) {
          Rank3D<double> rank(world, {1, 4, 2, 1}, config, 1, {2, 3, 1}, 1);
        });
      },
      "does not divide the 2 heads");
}

// Issue 36: ranks passing different (each valid) degrees used to split different groups and
// time out; they are compared first, and every rank names the ones that differ.
TEST(ThreeD, RanksWithDifferentDegreesAreRefusedOnEveryRank) {
  const train::Config config = small_config();
  testing::expect_error(
      [&] {
        coll::run_ranks(4, [&](coll::Communicator& world) {
          const coll::GridDegrees degrees =
              world.rank() == 0 ? coll::GridDegrees{2, 2, 1, 1} : coll::GridDegrees{1, 2, 2, 1};
          const Shape shape{degrees.pp, 2, 1};
          Rank3D<double> rank(world, degrees, config, 1, shape, 1);
        });
      },
      {"Rank3D: the degrees, model or pipeline shape of rank(s) 1, 2, 3 differ from rank 0's",
       "same dp, tp, pp"});
}

TEST(ThreeD, RefusesSplitBackwardWithTensorParallelBlocks) {
  const train::Config config = small_config();
  const auto micro = random_micro_batches(config, 2, 1, 4, 5);
  testing::expect_error(
      [&] {
        coll::run_ranks(4, [&](coll::Communicator& world) {
          Rank3D<double> rank(world, {1, 2, 2, 1}, config, 1, {2, 2, 1}, 1);
          rank.step(make_schedule("zb-h1", {2, 2, 1}), micro);
        });
      },
      {"zb-h1 splits the backward into B and W", "tensor-parallel degree 2"});
}

}  // namespace
}  // namespace book::pp
