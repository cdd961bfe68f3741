// Graded: mem.flash_attention_forward (the backward is the chapter's, tested with it). Tiled
// attention against chapter 4's attention: outputs and dQ, dK, dV equal (within 1e-5 in
// float against a double reference, 1e-12 in double) at awkward sizes (T not a multiple of the
// tile, T = 1, tile 1, tile > T, several heads); the bytes each holds counted exactly.
#include "chapters/09_memory_accounting/flash_attention.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "chapters/04_training_baseline/layers.h"
#include "common/rng.h"
#include "common/testing/exercise.h"
#include "common/testing/expect_error.h"

namespace book::mem {
namespace {

std::vector<double> seeded(std::size_t n, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<double> v(n);
  for (double& x : v) x = 2.0 * rng.uniform() - 1.0;
  return v;
}

// Chapter 4's attention in double: out, and dqkv for dout.
struct Reference {
  std::vector<double> out, dqkv;
};

Reference reference(const std::vector<double>& qkv, const std::vector<double>& dout,
                    const FlashShape& s) {
  const std::size_t tokens = static_cast<std::size_t>(s.batch) * s.seq_len;
  const std::size_t width = static_cast<std::size_t>(s.n_head) * s.head_size;
  std::vector<double> att(s.rows() * s.seq_len);
  Reference r{std::vector<double>(tokens * width), std::vector<double>(tokens * 3 * width)};
  train::attention_forward(qkv.data(), s.batch, s.seq_len, s.n_head, s.head_size, att.data(),
                           r.out.data());
  train::attention_backward(dout.data(), qkv.data(), att.data(), s.batch, s.seq_len, s.n_head,
                            s.head_size, r.dqkv.data());
  return r;
}

template <typename T>
void expect_close(const std::vector<T>& actual, const std::vector<double>& expected, double tol,
                  const std::string& what, const FlashShape& s) {
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i)
    ASSERT_NEAR(static_cast<double>(actual[i]), expected[i], tol)
        << what << "[" << i << "] for B=" << s.batch << " T=" << s.seq_len << " H=" << s.n_head
        << " D=" << s.head_size << " tile=" << s.tile;
}

template <typename T>
void check_against_chapter4(const FlashShape& s, std::uint64_t seed, double tol) {
  const std::size_t tokens = static_cast<std::size_t>(s.batch) * s.seq_len;
  const std::size_t width = static_cast<std::size_t>(s.n_head) * s.head_size;
  const std::vector<double> qkv = seeded(tokens * 3 * width, seed);
  const std::vector<double> dout = seeded(tokens * width, seed + 1);
  const Reference ref = reference(qkv, dout, s);
  const std::vector<T> qkv_t(qkv.begin(), qkv.end()), dout_t(dout.begin(), dout.end());
  std::vector<T> out(tokens * width, T(1e30)), lse(s.rows(), T(1e30));  // poisoned
  std::vector<T> dqkv(tokens * 3 * width, T(1e30));
  flash_attention_forward(qkv_t.data(), s, out.data(), lse.data());
  flash_attention_backward(dout_t.data(), qkv_t.data(), out.data(), lse.data(), s, dqkv.data());
  expect_close(out, ref.out, tol, "out", s);
  expect_close(dqkv, ref.dqkv, tol, "dqkv (dQ, dK, dV)", s);
}

const FlashShape kShapes[] = {
    // batch, seq_len, n_head, head_size, tile
    {2, 37, 3, 8, 16},  // T not a multiple of the tile: the last tiles are short
    {1, 1, 2, 5, 16},   // T = 1: one key per query
    {3, 10, 4, 16, 1},  // tile 1: one row at a time
    {2, 9, 2, 7, 64},   // tile larger than T: one tile is the whole matrix
    {1, 64, 5, 3, 8},   // T a multiple of the tile, many tiles
};

EXERCISE_TEST("mem.flash_attention_forward", FlashAttention, FloatEqualsChapter4InDoubleWithin1e5) {
  std::uint64_t seed = 11;
  for (const FlashShape& s : kShapes) check_against_chapter4<float>(s, seed += 7, 1e-5);
}

EXERCISE_TEST("mem.flash_attention_forward", FlashAttention, DoubleEqualsChapter4Within1e12) {
  std::uint64_t seed = 101;
  for (const FlashShape& s : kShapes) check_against_chapter4<double>(s, seed += 7, 1e-12);
}

EXERCISE_TEST("mem.flash_attention_forward", FlashAttention, LogSumExpIsThePerRowNormaliser) {
  const FlashShape s{1, 5, 1, 4, 2};
  const std::vector<double> qkv = seeded(5 * 12, 5);
  std::vector<double> out(5 * 4), lse(5, 1e30);
  flash_attention_forward(qkv.data(), s, out.data(), lse.data());
  for (int i = 0; i < 5; ++i) {  // log Σ_{j ≤ i} exp(q_i · k_j / 2), written out
    double sum = 0;
    for (int j = 0; j <= i; ++j) {
      double dot = 0;
      for (int d = 0; d < 4; ++d) dot += qkv[i * 12 + d] * qkv[j * 12 + 4 + d];
      sum += std::exp(dot / 2);
    }
    EXPECT_NEAR(lse[i], std::log(sum), 1e-12) << "row " << i;
  }
}

// Chapter 4 keeps att [B, H, T, T]; the tiled forward keeps lse [B, H, T] plus one tile.
EXERCISE_TEST("mem.flash_attention_forward", FlashAttention, BytesHeldCountedExactly) {
  const FlashShape s{2, 100, 3, 8, 16};
  const std::size_t f = sizeof(float), B = 2, T = 100, H = 3, D = 8, tile = 16;
  const std::size_t tokens = B * T, width = H * D;
  const std::vector<double> qkv_d = seeded(tokens * 3 * width, 3);
  const std::vector<float> qkv(qkv_d.begin(), qkv_d.end());
  std::vector<float> out(tokens * width), dqkv(tokens * 3 * width), dout(out.size(), 0.5f);

  MemoryTracker naive;
  {
    TrackedBuffer<float> att(B * H * T * T, MemoryCategory::kActivations, &naive);
    train::attention_forward(qkv.data(), 2, 100, 3, 8, att.data(), out.data());
  }
  EXPECT_EQ(naive.peak_total(), B * H * T * T * f);  // 240 000 bytes

  MemoryTracker tiled;
  TrackedBuffer<float> lse(B * H * T, MemoryCategory::kActivations, &tiled);
  flash_attention_forward(qkv.data(), s, out.data(), lse.data(), &tiled);
  const std::size_t forward_scratch = (tile * tile + 2 * tile + tile * D) * f;
  EXPECT_EQ(tiled.peak(MemoryCategory::kOther), forward_scratch);  // 1 280 bytes
  EXPECT_EQ(tiled.peak_total(), B * H * T * f + forward_scratch);  // 2 400 + 1 280
  EXPECT_EQ(flash_forward_scratch_bytes(s, f), forward_scratch);
  tiled.reset_peaks();
  flash_attention_backward(dout.data(), qkv.data(), out.data(), lse.data(), s, dqkv.data(), &tiled);
  const std::size_t backward_scratch = (B * H * T + 2 * tile * tile) * f;
  EXPECT_EQ(tiled.peak(MemoryCategory::kOther), backward_scratch);  // 2 400 + 2 048
  EXPECT_EQ(tiled.peak_total(), B * H * T * f + backward_scratch);
  EXPECT_EQ(flash_backward_scratch_bytes(s, f), backward_scratch);
  EXPECT_EQ(tiled.current(MemoryCategory::kOther), 0u);  // scratch released
  // The tiled peak grows linearly in T, the naive one as T²: at T = 100 already 240 000 B against
  // the backward's 2 400 + 2 400 + 2 048 = 6 848 B (35×).
  EXPECT_EQ(tiled.peak_total(), 6848u);
  EXPECT_LT(tiled.peak_total() * 35, naive.peak_total());
}

EXERCISE_TEST("mem.flash_attention_forward", FlashAttention, BadSizesNameTheField) {
  std::vector<float> buf(64);
  testing::expect_error(
      [&] {
        flash_attention_forward(buf.data(), {1, 0, 1, 1, 4}, buf.data(), buf.data());
      },
      {"seq_len", "got 0"});
  testing::expect_error(
      [&] {
        flash_attention_forward(buf.data(), {1, 2, 1, 1, 0}, buf.data(), buf.data());
      },
      {"tile", "got 0"});
}

// The backward is the chapter's; its checks run after a valid forward (the exercise) made its
// inputs.
EXERCISE_TEST("mem.flash_attention_forward", FlashAttention, BackwardBadSizesNameTheField) {
  std::vector<float> buf(64, 0.25f);
  flash_attention_forward(buf.data(), {1, 2, 1, 1, 4}, buf.data() + 8, buf.data() + 16);
  testing::expect_error(
      [&] {
        flash_attention_backward(buf.data(), buf.data(), buf.data(), buf.data(), {1, 2, -3, 1, 4},
                                 buf.data());
      },
      {"n_head", "got -3"});
  testing::expect_error(
      [&] {
        flash_attention_backward(buf.data(), buf.data(), buf.data(), buf.data(), {0, 2, 1, 1, 4},
                                 buf.data());
      },
      {"batch", "got 0"});
}

}  // namespace
}  // namespace book::mem
