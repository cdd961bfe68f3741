// The engine's own edge pieces, and the answer to gemm.07: packing pads the last, partial
// micro-panel of a block with zeros, so the kernel always runs on full MR×NR panels; a partial
// tile of C is computed whole into a small buffer and only its valid corner is written back. At
// n = 127, 29 of gemm.06's 176 tiles (12.5% of the flops) are scalar fringe; here they cost what a
// full tile costs.
#include <algorithm>

#include "chapters/01_gemm_cpu/engine/engine.h"

namespace book::gemm::engine {

//! [pack-padded]
void pack_padded_panel(const float* src, long step_stride, long lane_stride, int lanes, int width,
                       int kc, float* dst) {
  for (int p = 0; p < kc; ++p, dst += width) {
    const float* step = src + p * step_stride;
    for (int l = 0; l < lanes; ++l) dst[l] = step[l * lane_stride];
    std::fill(dst + lanes, dst + width, 0.0f);  // padding: adds nothing to the product
  }
}
//! [pack-padded]

//! [write-partial]
void write_partial_tile(const float* tile, int tile_ld, int rows, int cols, float alpha, float beta,
                        float* c, long ldc) {
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) {
      float& out = c[i * ldc + j];
      const float product = alpha * tile[i * tile_ld + j];
      out = beta == 0.0f ? product : product + beta * out;  // beta == 0: C may hold NaN
    }
}
//! [write-partial]

}  // namespace book::gemm::engine
