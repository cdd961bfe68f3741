// Graded on every machine: the schedules of the exercise rungs (3, 5, 8), built from the map
// functions their kernels call. Each case calls the reader's schedule function.
#include "chapters/02_gemm_cuda/exercise_schedules.h"
#include "chapters/02_gemm_cuda/tiles.h"
#include "common/testing/exercise.h"
#include "tests/02_gemm_cuda/schedule_checks.h"

namespace book::gemm_cuda {
namespace {

using testing::awkward_shapes;
using testing::expect_exact_cover;
using testing::find_rung;

EXERCISE_TEST("cuda_gemm.shared_tile", SharedTileSchedule, CoversTilesAndOutputsExactlyOnce) {
  const auto rungs = ladder_schedules();
  for (GemmShape s : awkward_shapes()) expect_exact_cover(find_rung(rungs, 3), s);
}

EXERCISE_TEST("cuda_gemm.shared_tile", SharedTileSchedule, ReadsAndWritesOneRowPerWarp) {
  // A warp is one ty: it must read 32 consecutive floats of one row of A and of B (4 sectors
  // each) and write 32 consecutive floats of C.
  const auto rungs = ladder_schedules();
  testing::expect_tiled_traffic(find_rung(rungs, 3));
  const Traffic t = count_traffic(find_rung(rungs, 3), {64, 64, 64});
  EXPECT_EQ(t.c_sectors, 64 * 64 / 8) << "C written in full 32-byte sectors";
}

EXERCISE_TEST("cuda_gemm.register_2d", Register2dSchedule, CoversTilesAndOutputsExactlyOnce) {
  const auto rungs = ladder_schedules();
  for (GemmShape s : awkward_shapes()) expect_exact_cover(find_rung(rungs, 5), s);
}

EXERCISE_TEST("cuda_gemm.register_2d", Register2dSchedule, EachThreadOwnsAnEightByEightSquare) {
  const auto rungs = ladder_schedules();
  testing::expect_tiled_traffic(find_rung(rungs, 5));
  for (int t : {0, 17, 255}) {
    const ThreadSchedule p = register_2d_schedule({256, 256, 16}, 1, 1, t, 0);
    ASSERT_EQ(p.c.size(), 64u) << "thread " << t;
    ASSERT_EQ(p.a.size(), 4u) << "thread " << t;
    int min_row = 1 << 30, max_row = -1, min_col = 1 << 30, max_col = -1;
    for (const Access& x : p.c) {
      min_row = std::min(min_row, x.row), max_row = std::max(max_row, x.row);
      min_col = std::min(min_col, x.col), max_col = std::max(max_col, x.col + x.width - 1);
    }
    EXPECT_EQ(max_row - min_row, 7) << "thread " << t << ": rows of its results";
    EXPECT_EQ(max_col - min_col, 7) << "thread " << t << ": columns of its results";
  }
}

EXERCISE_TEST("cuda_gemm.wmma", WmmaSchedule, CoversTilesAndOutputsExactlyOnce) {
  const auto rungs = ladder_schedules();
  for (GemmShape s : awkward_shapes()) expect_exact_cover(find_rung(rungs, 8), s);
}

EXERCISE_TEST("cuda_gemm.wmma", WmmaSchedule, LoadsSixteenBytesAndKeepsWarpsInTheirSubTile) {
  const auto rungs = ladder_schedules();
  testing::expect_tiled_traffic(find_rung(rungs, 8));
  // Each warp's outputs lie in one 64 × 32 sub-tile of the block tile; 8 warps, 8 sub-tiles.
  for (int warp = 0; warp < TensorTile::kThreads / 32; ++warp) {
    int min_row = 1 << 30, max_row = -1, min_col = 1 << 30, max_col = -1;
    for (int lane = 0; lane < 32; ++lane) {
      const ThreadSchedule p = wmma_schedule({256, 256, 64}, 0, 0, warp * 32 + lane, 0);
      for (const Access& a : p.a) EXPECT_EQ(a.width, 8) << "A chunks are 16 bytes";
      for (const Access& x : p.c) {
        min_row = std::min(min_row, x.row), max_row = std::max(max_row, x.row);
        min_col = std::min(min_col, x.col), max_col = std::max(max_col, x.col);
      }
    }
    EXPECT_EQ(max_row - min_row + 1, TensorTile::kWM) << "warp " << warp;
    EXPECT_EQ(max_col - min_col + 1, TensorTile::kWN) << "warp " << warp;
    EXPECT_EQ(min_row % TensorTile::kWM, 0) << "warp " << warp;
    EXPECT_EQ(min_col % TensorTile::kWN, 0) << "warp " << warp;
  }
}

}  // namespace
}  // namespace book::gemm_cuda
