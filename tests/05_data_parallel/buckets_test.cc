// Graded: ddp.bucket_assignment. Buckets follow PyTorch's rule (whole tensors, from the back of
// the buffer, closed once they reach the cap), checked against an independent reference on
// random tensor sizes and caps, and on chapter 4's model.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "chapters/04_training_baseline/parameters.h"
#include "chapters/05_data_parallel/buckets.h"
#include "chapters/05_data_parallel/gradient_sync.h"
#include "common/rng.h"
#include "common/testing/exercise.h"

namespace book::ddp {
namespace {

// The rule written another way: first the bucket each tensor goes to (counting from the back),
// then the ranges.
std::vector<FlatRange> reference_buckets(const std::vector<FlatRange>& tensors, std::size_t cap) {
  std::vector<int> bucket_of(tensors.size());
  int bucket = 0;
  std::size_t filled = 0;
  for (std::size_t i = tensors.size(); i-- > 0;) {
    if (filled >= cap) ++bucket, filled = 0;
    bucket_of[i] = bucket;
    filled += tensors[i].size();
  }
  std::vector<FlatRange> out(static_cast<std::size_t>(bucket) + 1);
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    FlatRange& b = out[static_cast<std::size_t>(bucket_of[i])];
    if (b.size() == 0) b.begin = tensors[i].begin;
    b.end = tensors[i].end;
  }
  return out;
}

std::vector<FlatRange> random_tensors(Rng& rng, int count) {
  std::vector<FlatRange> tensors;
  std::size_t at = 0;
  for (int i = 0; i < count; ++i) {
    // Mostly small (biases, gains), some large (matrices), like a transformer's tensors.
    const std::size_t size =
        rng.uniform() < 0.3 ? rng.uniform_int(100, 5000) : rng.uniform_int(1, 64);
    tensors.push_back({at, at + size});
    at += size;
  }
  return tensors;
}

EXERCISE_TEST("ddp.bucket_assignment", Buckets, FollowPyTorchsRuleOnRandomTensors) {
  Rng rng(12);
  for (int trial = 0; trial < 300; ++trial) {
    const auto tensors = random_tensors(rng, static_cast<int>(rng.uniform_int(1, 40)));
    const std::size_t cap = rng.uniform_int(1, 9000);
    const auto got = assign_buckets(tensors, cap);
    const auto want = reference_buckets(tensors, cap);
    ASSERT_EQ(got, want) << "trial " << trial << ", " << tensors.size() << " tensors, cap " << cap
                         << " elements: got " << describe(got) << ", expected " << describe(want);
  }
}

EXERCISE_TEST("ddp.bucket_assignment", Buckets, TileTheBufferInReverseAtTensorBoundaries) {
  Rng rng(13);
  for (int trial = 0; trial < 100; ++trial) {
    const auto tensors = random_tensors(rng, 25);
    const std::size_t cap = rng.uniform_int(50, 4000);
    const auto buckets = assign_buckets(tensors, cap);
    ASSERT_FALSE(buckets.empty());
    ASSERT_EQ(buckets.front().end, tensors.back().end) << "bucket 0 ends the buffer";
    ASSERT_EQ(buckets.back().begin, 0u) << "the last bucket starts it";
    for (std::size_t i = 0; i < buckets.size(); ++i) {
      if (i + 1 < buckets.size()) {
        ASSERT_EQ(buckets[i + 1].end, buckets[i].begin) << describe(buckets);
        ASSERT_GE(buckets[i].size(), cap) << "only the last bucket may stay under the cap";
      }
      bool starts_a_tensor = false;
      for (const auto& t : tensors) starts_a_tensor |= t.begin == buckets[i].begin;
      ASSERT_TRUE(starts_a_tensor) << "bucket " << i << " cuts a tensor: " << describe(buckets);
    }
  }
  // A tensor larger than the cap is a bucket by itself; a small one joins the next.
  const std::vector<FlatRange> big = {{0, 10}, {10, 1010}, {1010, 1200}};
  EXPECT_EQ(assign_buckets(big, 100), (std::vector<FlatRange>{{1010, 1200}, {10, 1010}, {0, 10}}));
  const std::vector<FlatRange> small_last = {{0, 10}, {10, 1010}, {1010, 1020}};
  EXPECT_EQ(assign_buckets(small_last, 100), (std::vector<FlatRange>{{10, 1020}, {0, 10}}))
      << "[1010, 1020) is under the cap, so [10, 1010) joins it";
}

EXERCISE_TEST("ddp.bucket_assignment", Buckets, OnChapter4sModel) {
  train::Config c;
  c.n_layer = 4, c.d_model = 128, c.n_head = 4, c.vocab_size = 12, c.context = 11;
  const train::ParameterLayout layout(c);
  const auto tensors = tensor_ranges(layout);
  EXPECT_EQ(plan_buckets(tensors, kPyTorchBucketBytes, sizeof(float)).size(), 1u)
      << "the whole gradient (" << layout.total() * 4 << " bytes) is below PyTorch's 25 MiB";
  // A cap of one block's matrices (12·C² elements): four buckets of 198272 elements (a block's
  // size, each shifted by one LayerNorm: the final one joins bucket 0) and a small fifth one, the
  // first block's LayerNorm with the embeddings.
  const auto per_layer = plan_buckets(tensors, 4 * 12 * 128 * 128, sizeof(float));
  ASSERT_EQ(per_layer.size(), 5u) << describe(per_layer);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(per_layer[i].size(), 198272u) << describe(per_layer);
  EXPECT_EQ(per_layer[4], (FlatRange{0, 3200})) << describe(per_layer);
  EXPECT_EQ(per_layer, reference_buckets(tensors, 12 * 128 * 128));
  const auto one_each = plan_buckets(tensors, 1, sizeof(float));
  EXPECT_EQ(one_each.size(), tensors.size()) << "a cap of one element: one bucket per tensor";
}

}  // namespace
}  // namespace book::ddp
