// Packing: copy a block of A or B into exactly the order the micro-kernel reads it, so that the
// kernel streams contiguous, aligned memory (one TLB page serves ~1000 steps instead of one row).
// A transposed operand (sgemm's, and chapter 4's weight gradients xᵀ·dy) gets its own loop order,
// so that it too is read along its rows rather than down its columns.
// Full micro-panels are copied here; the last one of a block, when partial, goes through the
// packer of partial panels (gemm.07: edges.cc, or the track's in rung 7), which pads it with zeros.
#include <algorithm>

#include "chapters/01_gemm_cpu/engine/engine.h"

namespace book::gemm::engine {

void pack_a(const Strided& a, int i0, int p0, int mc, int kc, int mr, float* dst,
            PanelPacker partial) {
  for (int panel = 0; panel < mc; panel += mr, dst += mr * kc) {
    const int rows = std::min(mr, mc - panel);
    const float* first = a.data + (i0 + panel) * a.row_stride + p0 * a.col_stride;
    if (rows < mr) {
      partial(first, a.col_stride, a.row_stride, rows, mr, kc, dst);
      continue;
    }
    if (a.row_stride == 1) {  // A read transposed: a step's MR values lie side by side
      for (int p = 0; p < kc; ++p) {
        const float* src = first + p * a.col_stride;
        for (int i = 0; i < mr; ++i) dst[p * mr + i] = src[i];
      }
      continue;
    }
    for (int i = 0; i < mr; ++i) {
      const float* src = first + i * a.row_stride;
      for (int p = 0; p < kc; ++p) dst[p * mr + i] = src[p * a.col_stride];
    }
  }
}

void pack_b(const Strided& b, int p0, int j0, int kc, int nc, int nr, float* dst,
            PanelPacker partial) {
  for (int panel = 0; panel < nc; panel += nr, dst += nr * kc) {
    const int cols = std::min(nr, nc - panel);
    const float* first = b.data + p0 * b.row_stride + (j0 + panel) * b.col_stride;
    if (cols < nr) {
      partial(first, b.row_stride, b.col_stride, cols, nr, kc, dst);
      continue;
    }
    if (b.row_stride == 1 && b.col_stride != 1) {  // B read transposed: a column's steps adjacent
      // A few steps at a time, so the NR source columns and the destination rows all stay in L1.
      constexpr int kSteps = 16;
      for (int p0 = 0; p0 < kc; p0 += kSteps) {
        const int steps = std::min(kSteps, kc - p0);
        for (int j = 0; j < nr; ++j) {
          const float* src = first + j * b.col_stride + p0;
          float* out = dst + static_cast<std::size_t>(p0) * nr + j;
          for (int p = 0; p < steps; ++p) out[p * nr] = src[p];
        }
      }
      continue;
    }
    for (int p = 0; p < kc; ++p) {
      const float* src = first + p * b.row_stride;
      float* out = dst + p * nr;
      if (b.col_stride == 1) {
        std::copy(src, src + nr, out);
      } else {
        for (int j = 0; j < nr; ++j) out[j] = src[j * b.col_stride];
      }
    }
  }
}

}  // namespace book::gemm::engine
