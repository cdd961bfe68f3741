// gemm.07 — your turn: the two pieces that let the engine run every tile, full or partial, through
// the micro-kernel (the contracts are in chapters/01_gemm_cpu/gemm.h):
//   pack_padded_panel: copy one micro-panel step by step, dst[p * width + l], the lanes the source
//     has from src[p * step_stride + l * lane_stride], zeros for the rest up to `width`;
//   write_partial_tile: write alpha * tile + beta * C into the rows × cols corner of C (C not read
//     when beta == 0), nothing else.
// Rung 7 runs the engine (AVX2 kernel, one thread) with these two plugged in; the engine packs full
// panels and multiplies full tiles itself.
#include "chapters/01_gemm_cpu/gemm.h"
#include "common/check.h"

namespace book::gemm {

void pack_padded_panel(const float* src, long step_stride, long lane_stride, int lanes, int width,
                       int kc, float* dst) {
  (void)src, (void)step_stride, (void)lane_stride, (void)lanes, (void)width, (void)kc, (void)dst;
  BOOK_NOT_IMPLEMENTED("gemm.07", "exercises/01_gemm_cpu/r07_edges.cc",
                       "chapters/01_gemm_cpu/README.md, section Rung 7: edges");
}

void write_partial_tile(const float* tile, int tile_ld, int rows, int cols, float alpha, float beta,
                        float* c, long ldc) {
  (void)tile, (void)tile_ld, (void)rows, (void)cols, (void)alpha, (void)beta, (void)c, (void)ldc;
  BOOK_NOT_IMPLEMENTED("gemm.07", "exercises/01_gemm_cpu/r07_edges.cc",
                       "chapters/01_gemm_cpu/README.md, section Rung 7: edges");
}

}  // namespace book::gemm
