#include "chapters/02_gemm_cuda/schedule.h"

#include <set>

#include "chapters/02_gemm_cuda/exercise_schedules.h"
#include "chapters/02_gemm_cuda/tiles.h"
#include "chapters/02_gemm_cuda/wgmma.h"
#include "common/check.h"

namespace book::gemm_cuda {

void check_gemm_args(const void* a, const void* b, const void* c, GemmShape shape) {
  BOOK_CHECK(shape.m > 0 && shape.n > 0 && shape.k > 0,
             "GEMM shape m=" << shape.m << " n=" << shape.n << " k=" << shape.k
                             << " is not positive: every dimension must be at least 1");
  BOOK_CHECK(
      a != nullptr && b != nullptr && c != nullptr,
      "GEMM got a null pointer (a=" << a << " b=" << b << " c=" << c
                                    << "): pass device buffers of m·k, k·n and m·n elements");
}

namespace {

// Appends the accesses one chunk turns into, exactly as the kernels' read_chunk/write_chunk do.
void add_chunk(std::vector<Access>& out, int row, int col, int rows, int cols, int width,
               bool aligned) {
  switch (chunk_kind(row, col, rows, cols, width, aligned)) {
    case ChunkKind::kVector:
      out.push_back({row, col, width, true});
      return;
    case ChunkKind::kZero:
      out.push_back({row, col, width, false});
      return;
    case ChunkKind::kScalar:
      for (int j = 0; j < width; ++j) out.push_back({row, col + j, 1, col + j < cols});
      return;
  }
}

}  // namespace

ThreadSchedule tiled_schedule(GemmShape s, int block_x, int block_y, int k_step,
                              const TileSpec& spec, std::span<const Coord> a_chunks,
                              std::span<const Coord> b_chunks, std::span<const Coord> c_chunks) {
  const int row0 = block_y * spec.block_m, col0 = block_x * spec.block_n;
  const int k0 = k_step * spec.block_k;
  ThreadSchedule schedule;
  const bool a_aligned = s.k % spec.in_width == 0, b_aligned = s.n % spec.in_width == 0;
  for (Coord p : a_chunks)
    add_chunk(schedule.a, row0 + p.row, k0 + p.col, s.m, s.k, spec.in_width, a_aligned);
  for (Coord p : b_chunks)
    add_chunk(schedule.b, k0 + p.row, col0 + p.col, s.k, s.n, spec.in_width, b_aligned);
  const bool c_aligned = s.n % spec.out_width == 0;
  for (Coord p : c_chunks)
    add_chunk(schedule.c, row0 + p.row, col0 + p.col, s.m, s.n, spec.out_width, c_aligned);
  return schedule;
}

LaunchGeometry tiled_geometry(GemmShape s, const TileSpec& spec, int threads) {
  return {{ceil_div(s.n, spec.block_n), ceil_div(s.m, spec.block_m)},
          {threads, 1},
          ceil_div(s.k, spec.block_k),
          spec.block_k,
          spec.block_m,
          spec.block_n};
}

namespace {

// Rungs 1 and 2: one output per thread, one A and one B element per step (step = one k).
ThreadSchedule single_output_schedule(GemmShape s, Coord out, int k) {
  ThreadSchedule schedule;
  if (!inside(out.row, out.col, s.m, s.n)) return schedule;  // the kernel returns early
  schedule.a.push_back({out.row, k, 1, true});
  schedule.b.push_back({k, out.col, 1, true});
  schedule.c.push_back({out.row, out.col, 1, true});
  return schedule;
}

constexpr int kSide = SquareTiles::kSide;

LaunchGeometry square_geometry(GemmShape s, bool rows_along_x) {
  const Extent grid = rows_along_x ? Extent{ceil_div(s.m, kSide), ceil_div(s.n, kSide)}
                                   : Extent{ceil_div(s.n, kSide), ceil_div(s.m, kSide)};
  return {grid, {kSide, kSide}, s.k, 1, kSide, kSide, rows_along_x};
}

constexpr TileSpec kSpec1d{BlockTile1d::kBM, BlockTile1d::kBN, BlockTile1d::kBK, 1, 1};
constexpr TileSpec kSpec2dScalar{BlockTile2d::kBM, BlockTile2d::kBN, BlockTile2d::kBK, 1, 1};
constexpr TileSpec kSpec2dVector{BlockTile2d::kBM, BlockTile2d::kBN, BlockTile2d::kBK, 4, 4};
constexpr TileSpec kSpecWarp{WarpTile::kBM, WarpTile::kBN, WarpTile::kBK, 4, 4};
constexpr TileSpec kSpecTensor{TensorTile::kBM, TensorTile::kBN, TensorTile::kBK,
                               TensorTile::kChunk, 1};

ThreadSchedule blocktile_1d_schedule(GemmShape s, int bx, int by, int t, int step) {
  const Coord a[] = {blocktile_1d_a(t)};
  const Coord b[] = {blocktile_1d_b(t)};
  Coord c[BlockTile1d::kTM];
  const Coord first = blocktile_1d_output(t);
  for (int i = 0; i < BlockTile1d::kTM; ++i) c[i] = {first.row + i, first.col};
  return tiled_schedule(s, bx, by, step, kSpec1d, a, b, c);
}

ThreadSchedule vectorised_schedule(GemmShape s, int bx, int by, int t, int step) {
  const Coord a[] = {vectorised_a(t)};
  const Coord b[] = {vectorised_b(t)};
  Coord c[BlockTile2d::kTM * BlockTile2d::kTN / 4];
  const Coord first = vectorised_output(t);
  for (int i = 0; i < BlockTile2d::kTM; ++i)
    for (int j = 0; j < BlockTile2d::kTN / 4; ++j)
      c[i * 2 + j] = {first.row + i, first.col + 4 * j};
  return tiled_schedule(s, bx, by, step, kSpec2dVector, a, b, c);
}

ThreadSchedule warptile_schedule(GemmShape s, int bx, int by, int t, int step) {
  constexpr int kLoads = chunks_per_thread(WarpTile::kBM, WarpTile::kBK, 4, WarpTile::kThreads);
  Coord a[kLoads], b[kLoads];
  for (int i = 0; i < kLoads; ++i) a[i] = warptile_a(t, i), b[i] = warptile_b(t, i);
  std::vector<Coord> c;
  for (int wm = 0; wm < WarpTile::kIterM; ++wm)
    for (int wn = 0; wn < WarpTile::kIterN; ++wn)
      for (int i = 0; i < WarpTile::kTM; ++i) {
        const Coord first = warptile_output(t, wm, wn);
        c.push_back({first.row + i, first.col});  // one float4 per row of the 4 × 4 square
      }
  return tiled_schedule(s, bx, by, step, kSpecWarp, a, b, c);
}

ThreadSchedule mma_schedule(GemmShape s, int bx, int by, int t, int step) {
  constexpr int kLoads =
      chunks_per_thread(TensorTile::kBM, TensorTile::kBK, TensorTile::kChunk, TensorTile::kThreads);
  Coord a[kLoads], b[kLoads];
  for (int i = 0; i < kLoads; ++i) a[i] = tensor_a_chunk(t, i), b[i] = tensor_b_chunk(t, i);
  std::vector<Coord> c;
  for (int mi = 0; mi < TensorTile::kWM / 16; ++mi)
    for (int ni = 0; ni < TensorTile::kWN / 8; ++ni)
      for (int reg = 0; reg < 4; ++reg) c.push_back(mma_output(t, mi, ni, reg));
  return tiled_schedule(s, bx, by, step, kSpecTensor, a, b, c);
}

// Rung 10. TMA copies whole boxes — one 128 × 64 box of A and two 64 × 64 boxes of B per stage —
// issued by one thread; what crosses the memory system is each box's 16-byte pieces that lie
// inside the matrix (the rest is zero-filled in shared memory). The schedule lists those pieces
// and deals them round-robin to the block's threads, so that the counting groups 32 consecutive
// pieces (four 128-byte box rows) into one request: bookkeeping for the traffic count, not what
// any thread executes. The C side is exact: each consumer thread's 64 accumulators, mapped by
// wgmma_accumulator() as the epilogue maps them. (One difference: a B box wholly outside the
// matrix is not fetched at all, so its "zero fill" here is stale shared memory there — read only
// into columns of C that are never stored.)
using WT = WgmmaTile;
constexpr TileSpec kSpecWgmma{WT::kBM, WT::kBN, WT::kBK, 8, 1};

bool wgmma_uses_tma(GemmShape s) { return wgmma_tma_unsupported(s, 0, 0) == nullptr; }

ThreadSchedule wgmma_schedule(GemmShape s, int bx, int by, int t, int step) {
  if (!wgmma_uses_tma(s)) return mma_schedule(s, bx, by, t, step);  // the launcher's fallback
  constexpr int kChunksPerRow = WT::kBoxCols / 8;                   // 8 pieces of 16 bytes
  constexpr int kAChunks = WT::kBM * kChunksPerRow;                 // one 128 × 64 box
  constexpr int kBChunksPerSlab = WT::kBK * kChunksPerRow;          // one 64 × 64 box
  std::vector<Coord> a, b, c;
  for (int piece = t; piece < kAChunks; piece += WT::kThreads)
    a.push_back({piece / kChunksPerRow, (piece % kChunksPerRow) * 8});
  for (int piece = t; piece < WT::kBSlabs * kBChunksPerSlab; piece += WT::kThreads) {
    const int slab = piece / kBChunksPerSlab, in_slab = piece % kBChunksPerSlab;
    b.push_back({in_slab / kChunksPerRow, wgmma_b_box_col(slab) + (in_slab % kChunksPerRow) * 8});
  }
  if (t >= WT::kWarpgroup) {  // a consumer: warpgroup 1 or 2 holds rows 0–63 or 64–127
    const int consumer = t / WT::kWarpgroup - 1;
    for (int reg = 0; reg < WT::kAccumulators; ++reg) {
      const Coord e = wgmma_accumulator(t % WT::kWarpgroup, reg);
      c.push_back({consumer * WT::kInstrM + e.row, e.col});
    }
  }
  return tiled_schedule(s, bx, by, step, kSpecWgmma, a, b, c);
}

LaunchGeometry wgmma_geometry(GemmShape s) {
  if (!wgmma_uses_tma(s)) return tiled_geometry(s, kSpecTensor, TensorTile::kThreads);
  return tiled_geometry(s, kSpecWgmma, WT::kThreads);
}

}  // namespace

std::vector<RungSchedule> ladder_schedules() {
  std::vector<RungSchedule> rungs;
  rungs.push_back({1, "naive", "one thread per C element; threadIdx.x runs down a column", 4, "",
                   [](GemmShape s) { return square_geometry(s, true); },
                   [](GemmShape s, int bx, int by, int t, int k) {
                     return single_output_schedule(s, naive_output(bx, by, t % kSide, t / kSide),
                                                   k);
                   }});
  rungs.push_back(
      {2, "coalesced", "threadIdx.x runs along a row: a warp reads 128 contiguous bytes", 4, "",
       [](GemmShape s) { return square_geometry(s, false); },
       [](GemmShape s, int bx, int by, int t, int k) {
         return single_output_schedule(s, coalesced_output(bx, by, t % kSide, t / kSide), k);
       }});
  rungs.push_back({3, "shared_tile", "32×32 tiles of A and B staged in shared memory", 4,
                   "cuda_gemm.shared_tile",
                   [](GemmShape s) {
                     LaunchGeometry g = square_geometry(s, false);
                     g.k_steps = ceil_div(s.k, kSide);
                     g.k_tile = kSide;
                     return g;
                   },
                   shared_tile_schedule});
  rungs.push_back({4, "blocktile_1d", "each thread computes 8 results down a column (registers)", 4,
                   "",
                   [](GemmShape s) { return tiled_geometry(s, kSpec1d, BlockTile1d::kThreads); },
                   blocktile_1d_schedule});
  rungs.push_back(
      {5, "register_2d", "each thread computes an 8×8 square: outer products", 4,
       "cuda_gemm.register_2d",
       [](GemmShape s) { return tiled_geometry(s, kSpec2dScalar, BlockTile2d::kThreads); },
       register_2d_schedule});
  rungs.push_back(
      {6, "vectorised", "16-byte (float4) loads and stores; A tile stored transposed", 4, "",
       [](GemmShape s) { return tiled_geometry(s, kSpec2dVector, BlockTile2d::kThreads); },
       vectorised_schedule});
  rungs.push_back({7, "warptile", "each warp owns a compact 64×32 sub-tile (fewer smem loads)", 4,
                   "", [](GemmShape s) { return tiled_geometry(s, kSpecWarp, WarpTile::kThreads); },
                   warptile_schedule});
  rungs.push_back({8, "wmma_bf16", "tensor cores through WMMA: BF16 in, FP32 accumulate", 2,
                   "cuda_gemm.wmma",
                   [](GemmShape s) { return tiled_geometry(s, kSpecTensor, TensorTile::kThreads); },
                   wmma_schedule});
  rungs.push_back({9, "mma_cp_async", "mma.sync + ldmatrix, 3-stage cp.async pipeline", 2, "",
                   [](GemmShape s) { return tiled_geometry(s, kSpecTensor, TensorTile::kThreads); },
                   mma_schedule});
  rungs.push_back({10, "wgmma_tma", "wgmma from swizzled smem, TMA loads, 4-stage mbarrier ring", 2,
                   "", wgmma_geometry, wgmma_schedule});
  return rungs;
}

namespace {

// Sectors one warp-wide instruction touches: the distinct 32-byte pieces of every lane's access.
std::int64_t sectors(const std::vector<const Access*>& lanes, int ld, int element_bytes) {
  std::set<std::int64_t> touched;
  for (const Access* access : lanes) {
    const std::int64_t first = (std::int64_t(access->row) * ld + access->col) * element_bytes;
    const std::int64_t last = first + std::int64_t(access->width) * element_bytes - 1;
    for (std::int64_t sector = first / 32; sector <= last / 32; ++sector) touched.insert(sector);
  }
  return static_cast<std::int64_t>(touched.size());
}

// Adds one warp's thread schedules at one step: the i-th access of every lane is one instruction.
void count_warp(const std::vector<ThreadSchedule>& warp, GemmShape s, int input_bytes, bool with_c,
                Traffic& traffic) {
  auto instructions = [&](auto member, int ld, int bytes, std::int64_t& elements,
                          std::int64_t& sector_count, bool is_load) {
    std::size_t most = 0;
    for (const ThreadSchedule& thread : warp) most = std::max(most, (thread.*member).size());
    for (std::size_t i = 0; i < most; ++i) {
      std::vector<const Access*> lanes;
      for (const ThreadSchedule& thread : warp)
        if (i < (thread.*member).size() && (thread.*member)[i].inside) {
          lanes.push_back(&(thread.*member)[i]);
          elements += (thread.*member)[i].width;
        }
      if (lanes.empty()) continue;
      sector_count += sectors(lanes, ld, bytes);
      if (is_load) ++traffic.load_instructions;
    }
  };
  instructions(&ThreadSchedule::a, s.k, input_bytes, traffic.a_elements, traffic.a_sectors, true);
  instructions(&ThreadSchedule::b, s.n, input_bytes, traffic.b_elements, traffic.b_sectors, true);
  if (with_c)
    instructions(&ThreadSchedule::c, s.n, 4, traffic.c_elements, traffic.c_sectors, false);
}

void count_block(const RungSchedule& rung, GemmShape s, const LaunchGeometry& g, int bx, int by,
                 Traffic& traffic) {
  const int threads = g.block.x * g.block.y;
  for (int step = 0; step < g.k_steps; ++step) {
    for (int warp0 = 0; warp0 < threads; warp0 += 32) {
      std::vector<ThreadSchedule> warp;
      for (int t = warp0; t < std::min(threads, warp0 + 32); ++t)
        warp.push_back(rung.thread_schedule(s, bx, by, t, step));
      count_warp(warp, s, rung.input_bytes, step == 0, traffic);
    }
  }
}

}  // namespace

Traffic count_traffic(const RungSchedule& rung, GemmShape shape) {
  const LaunchGeometry g = rung.geometry(shape);
  Traffic traffic;
  for (int by = 0; by < g.grid.y; ++by)
    for (int bx = 0; bx < g.grid.x; ++bx) count_block(rung, shape, g, bx, by, traffic);
  return traffic;
}

Traffic count_traffic_by_block(const RungSchedule& rung, GemmShape shape) {
  const LaunchGeometry g = rung.geometry(shape);
  Traffic one;
  count_block(rung, shape, g, 0, 0, one);
  const std::int64_t blocks = std::int64_t(g.grid.x) * g.grid.y;
  Traffic all;
  all.a_elements = one.a_elements * blocks;
  all.b_elements = one.b_elements * blocks;
  all.c_elements = one.c_elements * blocks;
  all.a_sectors = one.a_sectors * blocks;
  all.b_sectors = one.b_sectors * blocks;
  all.c_sectors = one.c_sectors * blocks;
  all.load_instructions = one.load_instructions * blocks;
  return all;
}

std::int64_t tiled_input_elements(GemmShape s, int block_m, int block_n) {
  return std::int64_t(s.m) * s.k * ceil_div(s.n, block_n) +
         std::int64_t(s.k) * s.n * ceil_div(s.m, block_m);
}

}  // namespace book::gemm_cuda
