// Graded: zero.reduce_scatter_gradients. Each rank's piece is the mean over ranks of its shard of
// the bucket, against an FP64 reference, at N = 1..4, counts N does not divide, in FP32, BF16 and
// FP16 (16-bit inputs rounded first, as the wire carries them); pieces poisoned before the call;
// wrong pieces and short staging buffers refused with messages; bytes sent exact.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "chapters/03_collectives/threads.h"
#include "chapters/04_training_baseline/mixed_precision.h"
#include "chapters/06_zero/gradient_shards.h"
#include "common/rng.h"
#include "common/testing/exercise.h"
#include "common/testing/expect_error.h"

namespace book::zero {
namespace {

// Rank r's seeded gradients: uniform in [-1, 1), never all zeros.
std::vector<float> rank_grads(std::size_t count, int rank) {
  Rng rng(1000 + static_cast<std::uint64_t>(rank));
  std::vector<float> g(count);
  for (float& x : g) x = static_cast<float>(2 * rng.uniform() - 1);
  return g;
}

// The value the wire carries for x: FP32 itself, or x rounded to 16 bits.
double on_the_wire(DType wire, float x) {
  if (wire == DType::kF32) return x;
  std::uint16_t bits = 0;
  float back = 0;
  train::encode(wire, std::span<const float>(&x, 1), std::span<std::uint16_t>(&bits, 1));
  train::decode(wire, std::span<const std::uint16_t>(&bits, 1), std::span<float>(&back, 1));
  return back;
}

// Tolerance, absolute, for a mean of N values in [-1, 1): the ring adds in FP32 and rounds to
// the wire type after each of its N − 1 additions and once more for the mean: (N + 1) units of
// the type's epsilon at magnitude ≤ N, divided by N; FP32 is far below the 16-bit bound.
double tolerance(DType wire, int n) {
  const double eps = wire == DType::kBF16 ? 0x1p-8 : wire == DType::kF16 ? 0x1p-11 : 0x1p-23;
  return (n + 1) * eps;
}

void check_bucket(int n, std::size_t count, DType wire) {
  std::vector<double> mean(count, 0.0);
  for (int r = 0; r < n; ++r) {
    const auto g = rank_grads(count, r);
    for (std::size_t i = 0; i < count; ++i) mean[i] += on_the_wire(wire, g[i]) / n;
  }
  coll::run_ranks(n, [&](coll::Communicator& comm) {
    const std::vector<float> grads = rank_grads(count, comm.rank());
    const coll::Shard mine = coll::shard_of(count, n, comm.rank());
    std::vector<std::uint16_t> staging(count, 0x7fc1);                                // poisoned
    std::vector<float> piece32(mine.count, std::numeric_limits<float>::quiet_NaN());  // poisoned
    std::vector<std::uint16_t> piece16(mine.count, 0x7fc1);  // a NaN in BF16 and FP16
    coll::Buffer piece = wire == DType::kF32 ? coll::Buffer(std::span<float>(piece32))
                                             : coll::Buffer(piece16.data(), piece16.size(), wire);
    reduce_scatter_bucket(comm, wire, grads, staging, piece);
    std::vector<float> got(piece32);
    if (wire != DType::kF32) {
      got.assign(mine.count, 0.0f);
      train::decode(wire, piece16, got);
    }
    for (std::size_t i = 0; i < mine.count; ++i) {
      const double expected = mean[mine.offset + i];
      if (!(std::fabs(got[i] - expected) <= tolerance(wire, n))) {
        ADD_FAILURE() << "N=" << n << " count=" << count << " " << dtype_name(wire) << " rank "
                      << comm.rank() << ": element " << mine.offset + i << " is " << got[i]
                      << ", expected " << expected << " (tolerance " << tolerance(wire, n)
                      << "); first mismatch shown";
        return;
      }
    }
  });
}

EXERCISE_TEST("zero.reduce_scatter_gradients", GradientShards, PieceIsTheMeanOfItsShard) {
  for (DType wire : {DType::kF32, DType::kBF16, DType::kF16})
    for (int n : {1, 2, 3, 4})
      for (std::size_t count : {std::size_t{1}, std::size_t{7}, std::size_t{1037}})
        check_bucket(n, count, wire);
}

// A ring reduce-scatter: rank r sends every chunk but its own, in the wire type's bytes.
EXERCISE_TEST("zero.reduce_scatter_gradients", GradientShards, BytesSentAreHalfARing) {
  const std::size_t count = 1037;
  for (DType wire : {DType::kF32, DType::kBF16}) {
    for (int n : {2, 3, 4}) {
      coll::run_ranks(n, [&](coll::Communicator& comm) {
        const std::vector<float> grads = rank_grads(count, comm.rank());
        const coll::Shard mine = coll::shard_of(count, n, comm.rank());
        std::vector<std::uint16_t> staging(count), piece16(mine.count);
        std::vector<float> piece32(mine.count);
        coll::Buffer piece = wire == DType::kF32
                                 ? coll::Buffer(std::span<float>(piece32))
                                 : coll::Buffer(piece16.data(), piece16.size(), wire);
        comm.reset_counters();
        reduce_scatter_bucket(comm, wire, grads, staging, piece);
        EXPECT_EQ(comm.counters().bytes_sent, (count - mine.count) * dtype_size(wire))
            << "N=" << n << " " << dtype_name(wire) << " rank " << comm.rank();
        EXPECT_EQ(comm.counters().messages_sent, static_cast<std::uint64_t>(n - 1));
      });
    }
  }
}

EXERCISE_TEST("zero.reduce_scatter_gradients", GradientShards, WrongPiecesAreRefused) {
  coll::run_ranks(2, [&](coll::Communicator& comm) {
    const std::vector<float> grads = rank_grads(9, comm.rank());
    std::vector<std::uint16_t> staging(9), piece16(5);
    std::vector<float> piece32(4);
    // Rank 0 owns 5 of 9 elements, rank 1 owns 4: everyone passes a piece of the wrong size.
    std::vector<float> wrong(comm.rank() == 0 ? 4 : 5);
    testing::expect_error(
        [&] { reduce_scatter_bucket(comm, DType::kF32, grads, staging, std::span<float>(wrong)); },
        {"rank " + std::to_string(comm.rank()),
         comm.rank() == 0 ? "must hold 5 x f32" : "must hold 4 x f32",
         "got " + std::to_string(wrong.size()) + " x f32"});
    const std::size_t mine = comm.rank() == 0 ? 5 : 4;
    testing::expect_error(
        [&] {
          reduce_scatter_bucket(comm, DType::kBF16, grads, staging,
                                std::span<float>(piece32.data(), mine));
        },
        "got " + std::to_string(mine) + " x f32");
    std::vector<std::uint16_t> short_staging(8);
    testing::expect_error(
        [&] {
          reduce_scatter_bucket(comm, DType::kBF16, grads, short_staging,
                                coll::Buffer(piece16.data(), mine, DType::kBF16));
        },
        {"staging buffer holds 8", "the bucket 9"});
  });
}

}  // namespace
}  // namespace book::zero
