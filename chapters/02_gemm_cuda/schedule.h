/// @file
/// The tile schedules of the GEMM ladder, as plain C++ that runs on the CPU.
///
/// A rung's schedule says, for every thread of every block and every step along K, which
/// elements of A and B it reads from global memory (and how: one wide access or masked scalar
/// ones) and which elements of C it writes. The schedules call the same index functions as the
/// kernels (index.h and each rung's map), so the CPU tests that check them (every tile element
/// loaded exactly once, every C element written exactly once, nothing read out of bounds) check
/// the kernels' index arithmetic without a GPU, and counting them gives the global-memory
/// traffic table in the chapter's README.
///
/// All matrices are row-major: C (m × n) = A (m × k) · B (k × n).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "chapters/02_gemm_cuda/index.h"

namespace book::gemm_cuda {

/// The problem size: C (m × n) = A (m × k) · B (k × n).
struct GemmShape {
  int m = 0;  ///< Rows of A and C.
  int n = 0;  ///< Columns of B and C.
  int k = 0;  ///< Columns of A, rows of B (the reduction length).
};

/// A two-dimensional launch extent (grid in blocks, or block in threads).
struct Extent {
  int x = 1;  ///< Fastest-varying dimension (threadIdx.x / blockIdx.x).
  int y = 1;  ///< Slower dimension (threadIdx.y / blockIdx.y).
};

/// How a rung is launched for one shape.
struct LaunchGeometry {
  Extent grid;      ///< Blocks: x covers the columns of C, y its rows (rung 1 swaps them).
  Extent block;     ///< Threads per block; thread number t = threadIdx.y * block.x + threadIdx.x.
  int k_steps = 0;  ///< Steps along K; each step reads one k-slice of A and of B.
  int k_tile = 1;   ///< Elements of K per step (1 for rungs without shared memory).
  int tile_m = 1;   ///< Rows of C per block.
  int tile_n = 1;   ///< Columns of C per block.
  bool x_covers_rows = false;  ///< Rung 1 only: blockIdx.x runs down the rows of C.
};

/// One global-memory access of one thread: `width` consecutive elements of a row starting at
/// (row, col). Accesses outside the matrix are recorded too, with `inside == false`: they are
/// the zero-filled parts of a tile that the kernel writes to shared memory without reading.
struct Access {
  int row = 0;         ///< Row of the first element.
  int col = 0;         ///< Column of the first element.
  int width = 1;       ///< Elements in the access (1 scalar; 4 floats or 8 bf16 = 16 bytes).
  bool inside = true;  ///< False for the zero-filled, never-read parts of a tile.
};

/// What one thread does at one K step: its reads of A and B in program order (the i-th access
/// of every lane of a warp is one load instruction), and, at the end, its writes of C.
struct ThreadSchedule {
  std::vector<Access> a;  ///< Reads of A at this step (and zero fills of the A tile).
  std::vector<Access> b;  ///< Reads of B at this step (and zero fills of the B tile).
  std::vector<Access> c;  ///< Writes of C (the same at every step; outside ones are skipped).
};

/// A rung's thread schedule: what thread `thread` of block (block_x, block_y) does at step
/// `k_step` (0 ≤ k_step < geometry.k_steps).
using ThreadScheduleFn = std::function<ThreadSchedule(GemmShape shape, int block_x, int block_y,
                                                      int thread, int k_step)>;

/// A rung's schedule and how it is launched.
struct RungSchedule {
  int rung = 0;                                       ///< Rung number (1–10).
  std::string name;                                   ///< Short name, e.g. "shared_tile".
  std::string what_changed;                           ///< One line: what is new on this rung.
  int input_bytes = 4;                                ///< Bytes per element of A and B.
  std::string exercise_id;                            ///< e.g. "cuda_gemm.shared_tile"; or empty.
  std::function<LaunchGeometry(GemmShape)> geometry;  ///< Launch geometry for a shape.
  ThreadScheduleFn thread_schedule;                   ///< Per-thread schedule.
};

/// Counted global-memory traffic of a rung for one shape, as requested by the SM (before any
/// L1/L2 cache hit): elements, and 32-byte sectors, the unit a memory transaction moves.
struct Traffic {
  std::int64_t a_elements = 0;  ///< Elements of A read (inside the matrix).
  std::int64_t b_elements = 0;  ///< Elements of B read.
  std::int64_t c_elements = 0;  ///< Elements of C written.
  std::int64_t a_sectors = 0;   ///< 32-byte sectors of A touched, summed over load instructions.
  std::int64_t b_sectors = 0;   ///< 32-byte sectors of B touched, summed over load instructions.
  std::int64_t c_sectors = 0;   ///< 32-byte sectors of C touched, summed over store instructions.
  std::int64_t load_instructions = 0;  ///< Warp-wide load instructions that read something.

  /// Bytes moved in sectors (loads and stores).
  std::int64_t sector_bytes() const { return 32 * (a_sectors + b_sectors + c_sectors); }
};

/// The tile sizes and access widths of a tiled rung, for tiled_schedule().
struct TileSpec {
  int block_m = 0;    ///< Rows of C per block (BM).
  int block_n = 0;    ///< Columns of C per block (BN).
  int block_k = 0;    ///< K per step (BK).
  int in_width = 1;   ///< Elements per A/B chunk (1, or 16 bytes' worth: 4 floats, 8 bf16).
  int out_width = 1;  ///< Elements per C chunk (1, or 4 floats).
};

/// Turns a thread's tile-relative chunks into its schedule for block (block_x, block_y) at step
/// `k_step`: adds the tile origins, and reads each chunk as the kernels do (chunk_kind(): one
/// wide access, a zero fill, or masked scalar accesses). A's rows are aligned for wide accesses
/// when k is a multiple of the width, B's and C's when n is.
ThreadSchedule tiled_schedule(GemmShape shape, int block_x, int block_y, int k_step,
                              const TileSpec& spec, std::span<const Coord> a_chunks,
                              std::span<const Coord> b_chunks, std::span<const Coord> c_chunks);

/// The launch geometry of a tiled rung: grid (⌈n/BN⌉, ⌈m/BM⌉), ⌈k/BK⌉ steps.
LaunchGeometry tiled_geometry(GemmShape shape, const TileSpec& spec, int threads);

/// Throws book::Error unless the shape is positive and every pointer non-null; every launcher
/// calls it before touching the GPU.
void check_gemm_args(const void* a, const void* b, const void* c, GemmShape shape);

/// The ladder's schedules, rungs 1–10 in order. The exercise rungs (3, 5, 8) call the track's
/// thread-schedule functions, which throw book::NotImplemented until the reader writes them. Rung
/// 10's schedule is rung 9's at shapes where it cannot use TMA (wgmma_tma_unsupported()), as its
/// launcher's is; it assumes 16-byte-aligned buffers (cudaMalloc gives 256).
std::vector<RungSchedule> ladder_schedules();

/// Counts the traffic of `rung` for `shape` by walking every thread of every block through
/// every K step (cost ∝ the number of accesses: keep shapes small, a few hundred at most).
Traffic count_traffic(const RungSchedule& rung, GemmShape shape);

/// Counts one block in the interior (block (0, 0)) and multiplies by the number of blocks. Exact
/// when m, n and k are multiples of the rung's tiles (the tests check it against
/// count_traffic); used for the README's table at 4096³, too big to walk thread by thread.
Traffic count_traffic_by_block(const RungSchedule& rung, GemmShape shape);

/// The closed form of the same count for tile-multiple shapes of the FP32 tiled rungs:
/// A is read once per column of blocks, B once per row of blocks: m·k·⌈n/BN⌉ + k·n·⌈m/BM⌉.
std::int64_t tiled_input_elements(GemmShape shape, int block_m, int block_n);

}  // namespace book::gemm_cuda
