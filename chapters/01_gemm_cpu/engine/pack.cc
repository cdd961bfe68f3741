// Packing: copy a block of A or B into exactly the order the micro-kernel reads it, so that the
// kernel streams contiguous, aligned memory (one TLB page serves ~1000 steps instead of one row).
#include <algorithm>

#include "chapters/01_gemm_cpu/engine/engine.h"

namespace book::gemm::engine {

void pack_a(const Strided& a, int i0, int p0, int mc, int kc, int mr, float* dst) {
  for (int panel = 0; panel < mc; panel += mr, dst += mr * kc) {
    const int rows = std::min(mr, mc - panel);
    for (int i = 0; i < rows; ++i) {
      const float* src = a.data + (i0 + panel + i) * a.row_stride + p0 * a.col_stride;
      for (int p = 0; p < kc; ++p) dst[p * mr + i] = src[p * a.col_stride];
    }
    for (int i = rows; i < mr; ++i)
      for (int p = 0; p < kc; ++p) dst[p * mr + i] = 0.0f;
  }
}

void pack_b(const Strided& b, int p0, int j0, int kc, int nc, int nr, float* dst) {
  for (int panel = 0; panel < nc; panel += nr, dst += nr * kc) {
    const int cols = std::min(nr, nc - panel);
    for (int p = 0; p < kc; ++p) {
      const float* src = b.data + (p0 + p) * b.row_stride + (j0 + panel) * b.col_stride;
      float* out = dst + p * nr;
      if (b.col_stride == 1) {
        std::copy(src, src + cols, out);
      } else {
        for (int j = 0; j < cols; ++j) out[j] = src[j * b.col_stride];
      }
      std::fill(out + cols, out + nr, 0.0f);
    }
  }
}

}  // namespace book::gemm::engine
