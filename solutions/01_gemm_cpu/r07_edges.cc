// gemm.07 — what changed: no scalar fringe. Packing pads the last, partial micro-panels with
// zeros, so the kernel always runs on full MR×NR panels; a partial tile of C is computed whole
// into a small buffer and only its valid corner is written back.
//
// The answer is the engine's own (chapters/01_gemm_cpu/engine/edges.cc, shown in the README): sgemm
// runs it whichever track is built, so it lives in the chapter, and this file plugs it into the
// solution track.
#include "chapters/01_gemm_cpu/engine/engine.h"
#include "chapters/01_gemm_cpu/gemm.h"

namespace book::gemm {

void pack_padded_panel(const float* src, long step_stride, long lane_stride, int lanes, int width,
                       int kc, float* dst) {
  engine::pack_padded_panel(src, step_stride, lane_stride, lanes, width, kc, dst);
}

void write_partial_tile(const float* tile, int tile_ld, int rows, int cols, float alpha, float beta,
                        float* c, long ldc) {
  engine::write_partial_tile(tile, tile_ld, rows, cols, alpha, beta, c, ldc);
}

}  // namespace book::gemm
