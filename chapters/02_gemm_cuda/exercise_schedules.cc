// The host schedules of the exercise rungs, built from the same map functions the kernels call.
// Scaffolding, not an exercise: the exercises are the *_map.h files and the .cu kernels in
// solutions/ or exercises/ (the `maps` track alias picks which).
#include "chapters/02_gemm_cuda/exercise_schedules.h"
#include "chapters/02_gemm_cuda/maps/register_2d_map.h"
#include "chapters/02_gemm_cuda/maps/shared_tile_map.h"
#include "chapters/02_gemm_cuda/maps/wmma_map.h"

namespace book::gemm_cuda {

ThreadSchedule shared_tile_schedule(GemmShape s, int bx, int by, int t, int step) {
  constexpr int kSide = SquareTiles::kSide;
  const int tx = t % kSide, ty = t / kSide;
  const Coord a[] = {shared_tile_a(tx, ty)}, b[] = {shared_tile_b(tx, ty)};
  const Coord c[] = {shared_tile_output(tx, ty)};
  return tiled_schedule(s, bx, by, step, {kSide, kSide, kSide, 1, 1}, a, b, c);
}

ThreadSchedule register_2d_schedule(GemmShape s, int bx, int by, int t, int step) {
  using T = BlockTile2d;
  Coord a[kRegister2dLoads], b[kRegister2dLoads];
  for (int i = 0; i < kRegister2dLoads; ++i) a[i] = register_2d_a(t, i), b[i] = register_2d_b(t, i);
  Coord c[T::kTM * T::kTN];
  const Coord first = register_2d_output(t);
  for (int i = 0; i < T::kTM; ++i)
    for (int j = 0; j < T::kTN; ++j) c[i * T::kTN + j] = {first.row + i, first.col + j};
  return tiled_schedule(s, bx, by, step, {T::kBM, T::kBN, T::kBK, 1, 1}, a, b, c);
}

ThreadSchedule wmma_schedule(GemmShape s, int bx, int by, int t, int step) {
  using T = TensorTile;
  Coord a[kWmmaLoads], b[kWmmaLoads];
  for (int i = 0; i < kWmmaLoads; ++i) a[i] = wmma_a_chunk(t, i), b[i] = wmma_b_chunk(t, i);
  std::vector<Coord> c;
  for (int fm = 0; fm < T::kWM / 16; ++fm)
    for (int fn = 0; fn < T::kWN / 16; ++fn) {
      const Coord f = wmma_fragment(t / 32, fm, fn);
      for (int i = 0; i < 8; ++i) {
        const Coord e = wmma_staged(t % 32, i);
        c.push_back({f.row + e.row, f.col + e.col});
      }
    }
  return tiled_schedule(s, bx, by, step, {T::kBM, T::kBN, T::kBK, T::kChunk, 1}, a, b, c);
}

}  // namespace book::gemm_cuda
