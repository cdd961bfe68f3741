// Checks a rung's schedule thread by thread on the CPU: the same walk for the scaffolding rungs
// (schedule_test) and the exercise rungs (exercise_schedule_test).
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "chapters/02_gemm_cuda/schedule.h"

namespace book::gemm_cuda::testing {

inline std::string describe(const RungSchedule& r, GemmShape s) {
  std::ostringstream out;
  out << "rung " << r.rung << " (" << r.name << ") at m=" << s.m << " n=" << s.n << " k=" << s.k;
  return out.str();
}

// Every access must be classified as the kernels classify it: an `inside` access lies wholly in
// the matrix, an outside one starts outside it; wide accesses start on a multiple of their width
// in a matrix whose rows are aligned for them.
inline void expect_access_flags(const Access& x, int rows, int cols, const std::string& where) {
  if (x.inside) {
    EXPECT_TRUE(x.row < rows && x.col + x.width <= cols)
        << where << ": access (" << x.row << "," << x.col << ")+" << x.width
        << " is marked inside but leaves the " << rows << "x" << cols << " matrix";
    if (x.width > 1) {
      EXPECT_TRUE(x.col % x.width == 0 && cols % x.width == 0)
          << where << ": wide access at column " << x.col << " of width " << x.width
          << " in rows of " << cols << " elements is not aligned";
    }
  } else {
    EXPECT_TRUE(x.row >= rows || x.col >= cols)
        << where << ": access (" << x.row << "," << x.col << ") is inside the " << rows << "x"
        << cols << " matrix but marked as a zero fill";
  }
}

// The whole check: tiles covered exactly once per block and step, C written exactly once.
inline void expect_exact_cover(const RungSchedule& rung, GemmShape s) {
  const std::string where = describe(rung, s);
  const LaunchGeometry g = rung.geometry(s);
  const Extent rows_cols = g.x_covers_rows ? Extent{g.grid.y, g.grid.x} : g.grid;
  ASSERT_EQ(rows_cols.x * g.tile_n >= s.n && rows_cols.y * g.tile_m >= s.m, true)
      << where << ": the grid does not cover C";
  ASSERT_EQ(g.k_steps * g.k_tile >= s.k && (g.k_steps - 1) * g.k_tile < s.k, true)
      << where << ": " << g.k_steps << " steps of " << g.k_tile << " do not cover k exactly";
  const int threads = g.block.x * g.block.y;
  std::vector<int> c_writes(std::size_t(s.m) * s.n, 0);
  const bool tiled = g.k_tile > 1 || rung.rung >= 3;
  int failures = 0;
  for (int by = 0; by < g.grid.y; ++by)
    for (int bx = 0; bx < g.grid.x; ++bx)
      for (int step = 0; step < g.k_steps; ++step) {
        // tile-relative cover counts of this block's A and B tiles at this step
        std::vector<int> a_cover(std::size_t(g.tile_m) * g.k_tile, 0);
        std::vector<int> b_cover(std::size_t(g.k_tile) * g.tile_n, 0);
        const int row0 = (g.x_covers_rows ? bx : by) * g.tile_m;
        const int col0 = (g.x_covers_rows ? by : bx) * g.tile_n, k0 = step * g.k_tile;
        for (int t = 0; t < threads; ++t) {
          const ThreadSchedule thread = rung.thread_schedule(s, bx, by, t, step);
          for (const Access& x : thread.a) {
            expect_access_flags(x, s.m, s.k, where + " A");
            for (int j = 0; j < x.width; ++j) {
              const int r = x.row - row0, c = x.col + j - k0;
              if (r < 0 || r >= g.tile_m || c < 0 || c >= g.k_tile) {
                ADD_FAILURE() << where << ": block (" << bx << "," << by << ") thread " << t
                              << " step " << step << " reads A(" << x.row << "," << x.col + j
                              << "), outside its tile";
                return;
              }
              ++a_cover[std::size_t(r) * g.k_tile + c];
            }
          }
          for (const Access& x : thread.b) {
            expect_access_flags(x, s.k, s.n, where + " B");
            for (int j = 0; j < x.width; ++j) {
              const int r = x.row - k0, c = x.col + j - col0;
              if (r < 0 || r >= g.k_tile || c < 0 || c >= g.tile_n) {
                ADD_FAILURE() << where << ": block (" << bx << "," << by << ") thread " << t
                              << " step " << step << " reads B(" << x.row << "," << x.col + j
                              << "), outside its tile";
                return;
              }
              ++b_cover[std::size_t(r) * g.tile_n + c];
            }
          }
          if (step != 0) continue;
          for (const Access& x : thread.c) {
            expect_access_flags(x, s.m, s.n, where + " C");
            if (!x.inside) continue;
            for (int j = 0; j < x.width; ++j) {
              const int r = x.row - row0, c = x.col + j - col0;
              if (r < 0 || r >= g.tile_m || c < 0 || c >= g.tile_n) {
                ADD_FAILURE() << where << ": block (" << bx << "," << by << ") thread " << t
                              << " writes C(" << x.row << "," << x.col + j
                              << "), outside its block's tile";
                return;
              }
              ++c_writes[std::size_t(x.row) * s.n + x.col + j];
            }
          }
        }
        if (!tiled) continue;
        for (std::size_t e = 0; e < a_cover.size() && failures < 5; ++e)
          if (a_cover[e] != 1 && ++failures)
            ADD_FAILURE() << where << ": block (" << bx << "," << by << ") step " << step
                          << ": A tile element (" << e / g.k_tile << "," << e % g.k_tile
                          << ") is filled " << a_cover[e] << " times, expected exactly once";
        for (std::size_t e = 0; e < b_cover.size() && failures < 5; ++e)
          if (b_cover[e] != 1 && ++failures)
            ADD_FAILURE() << where << ": block (" << bx << "," << by << ") step " << step
                          << ": B tile element (" << e / g.tile_n << "," << e % g.tile_n
                          << ") is filled " << b_cover[e] << " times, expected exactly once";
      }
  for (std::size_t e = 0; e < c_writes.size() && failures < 10; ++e)
    if (c_writes[e] != 1 && ++failures)
      ADD_FAILURE() << where << ": C(" << e / s.n << "," << e % s.n << ") is written "
                    << c_writes[e] << " times, expected exactly once";
}

// Awkward shapes: smaller than one tile, one past a tile, primes, k not a multiple of 4 or 8.
inline std::vector<GemmShape> awkward_shapes() {
  return {{1, 1, 1}, {33, 47, 19}, {129, 131, 37}, {128, 128, 32}, {200, 72, 136}, {7, 300, 9}};
}

inline const RungSchedule& find_rung(const std::vector<RungSchedule>& rungs, int number) {
  for (const RungSchedule& r : rungs)
    if (r.rung == number) return r;
  throw std::runtime_error("no rung " + std::to_string(number));
}

// Traffic checks shared by all tiled rungs: the inside elements read are exactly
// m·k·⌈n/BN⌉ + k·n·⌈m/BM⌉ at any shape, C is written once, and the per-block shortcut equals the
// full walk at tile-multiple shapes.
inline void expect_tiled_traffic(const RungSchedule& rung) {
  for (GemmShape s : awkward_shapes()) {
    const LaunchGeometry g = rung.geometry(s);
    const Traffic t = count_traffic(rung, s);
    EXPECT_EQ(t.a_elements + t.b_elements, tiled_input_elements(s, g.tile_m, g.tile_n))
        << describe(rung, s) << ": A+B elements read (A " << t.a_elements << ", B " << t.b_elements
        << ")";
    EXPECT_EQ(t.c_elements, std::int64_t(s.m) * s.n) << describe(rung, s) << ": C elements";
  }
  const LaunchGeometry unit = rung.geometry({1, 1, 1});
  const GemmShape multiple{2 * unit.tile_m, 3 * unit.tile_n, 4 * unit.k_tile};
  const Traffic full = count_traffic(rung, multiple),
                by_block = count_traffic_by_block(rung, multiple);
  EXPECT_EQ(full.a_sectors, by_block.a_sectors) << describe(rung, multiple);
  EXPECT_EQ(full.b_sectors, by_block.b_sectors) << describe(rung, multiple);
  EXPECT_EQ(full.c_sectors, by_block.c_sectors) << describe(rung, multiple);
  EXPECT_EQ(full.a_elements, by_block.a_elements) << describe(rung, multiple);
  // Every load instruction of a full tile is fully coalesced: sectors = bytes / 32 exactly.
  EXPECT_EQ(full.a_sectors * 32, full.a_elements * rung.input_bytes) << describe(rung, multiple);
  EXPECT_EQ(full.b_sectors * 32, full.b_elements * rung.input_bytes) << describe(rung, multiple);
}

}  // namespace book::gemm_cuda::testing
