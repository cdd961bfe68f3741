// A block's backward pass as B (input gradient) and W (weight gradients): block_backward's
// products, in its order, with the weight-gradient products moved to a second call.
#include "chapters/08_pipeline_parallel/block_split.h"

#include <algorithm>

#include "chapters/04_training_baseline/layers.h"
#include "common/check.h"

namespace book::pp {

// Chapter 4's block and layers, split: the same functions on the same buffers.
using namespace book::train;

namespace {

struct Widths {
  std::size_t n, c, width, hidden;
};

template <typename T>
Widths check_split(const char* who, const Config& config, const TensorParallelSlice& slice,
                   int batch, int seq_len, const BlockActivations<T>& a,
                   const WeightGradientInputs<T>& keep) {
  slice.validate(config);
  const std::size_t n = static_cast<std::size_t>(batch) * seq_len;
  BOOK_CHECK(batch >= 1 && seq_len >= 1 && batch <= a.max_batch && seq_len <= a.max_seq_len &&
                 n <= keep.max_rows,
             who << ": " << batch << " × " << seq_len << " rows do not fit the activations ("
                 << a.max_batch << " × " << a.max_seq_len << ") or the kept gradients ("
                 << keep.max_rows << " rows)");
  BOOK_CHECK(a.att.size() != 0, who << ": these activations have no attention probabilities");
  return {n, static_cast<std::size_t>(config.d_model),
          static_cast<std::size_t>(slice.width(config)),
          static_cast<std::size_t>(slice.hidden(config))};
}

template <typename T>
void fill_zero(T* data, std::size_t n) {
  std::fill(data, data + n, T(0));
}

}  // namespace

template <typename T>
WeightGradientInputs<T>::WeightGradientInputs(const Config& config,
                                              const TensorParallelSlice& slice, int max_batch,
                                              int max_seq_len, MemoryTracker* tracker)
    : max_rows(static_cast<std::size_t>(max_batch) * max_seq_len) {
  slice.validate(config);
  const std::size_t n = max_rows, c = config.d_model;
  const std::size_t width = slice.width(config), hidden = slice.hidden(config);
  const MemoryCategory kept = MemoryCategory::kActivations;
  d_out = TrackedBuffer<T>(n * c, kept, tracker);
  d_fc = TrackedBuffer<T>(n * hidden, kept, tracker);
  d_residual = TrackedBuffer<T>(n * c, kept, tracker);
  d_qkv = TrackedBuffer<T>(n * 3 * width, kept, tracker);
}

//! [block_backward_input]
template <typename T>
void block_backward_input(const Config& config, const TensorParallelSlice& slice,
                          const BlockTensors<T>& w, const BlockTensors<T>& g, int batch,
                          int seq_len, const T* x, const T* dy, T* dx, BlockActivations<T>& a,
                          BlockWorkspace<T>& ws, WeightGradientInputs<T>& keep) {
  const auto [n, c, width, hidden] =
      check_split("block_backward_input", config, slice, batch, seq_len, a, keep);
  BOOK_CHECK(n <= ws.max_rows, "block_backward_input: " << n << " rows do not fit the workspace ("
                                                        << ws.max_rows << " rows)");
  BOOK_CHECK(slice.size == 1,
             "block_backward_input: the split backward runs whole blocks (slice 0 of 1); this is "
             "tensor-parallel slice "
                 << slice.rank << " of " << slice.size
                 << ", whose backward runs through its seam in block_backward");
  const int rows = static_cast<int>(n), in = static_cast<int>(c);
  const int f = static_cast<int>(hidden), wd = static_cast<int>(width);
  std::copy(dy, dy + n * c, keep.d_out.data());
  T* d_residual = ws.d_residual.data();
  std::copy(dy, dy + n * c, d_residual);
  fill_zero(ws.d_gelu.data(), n * hidden);
  fill_zero(keep.d_fc.data(), n * hidden);
  linear_backward(dy, in, a.fc_gelu.data(), rows, f, w.w_proj, in, in, ws.d_gelu.data(),
                  static_cast<T*>(nullptr), static_cast<T*>(nullptr));
  gelu_backward(ws.d_gelu.data(), a.fc.data(), n * hidden, keep.d_fc.data());
  fill_zero(ws.d_ln.data(), n * c);
  linear_backward(keep.d_fc.data(), f, a.ln2.data(), rows, in, w.w_fc, f, f, ws.d_ln.data(),
                  static_cast<T*>(nullptr), static_cast<T*>(nullptr));
  layernorm_backward(ws.d_ln.data(), a.residual.data(), w.ln2_gain, a.ln2_mean.data(),
                     a.ln2_rstd.data(), rows, in, d_residual, g.ln2_gain, g.ln2_bias);
  std::copy(d_residual, d_residual + n * c, keep.d_residual.data());

  fill_zero(ws.d_att_out.data(), n * width);
  linear_backward(d_residual, in, a.att_out.data(), rows, wd, w.w_out, in, in, ws.d_att_out.data(),
                  static_cast<T*>(nullptr), static_cast<T*>(nullptr));
  fill_zero(keep.d_qkv.data(), 3 * n * width);
  attention_backward(ws.d_att_out.data(), a.qkv.data(), a.att.data(), batch, seq_len,
                     slice.heads(config), config.head_size(), keep.d_qkv.data());
  fill_zero(ws.d_ln.data(), n * c);
  for (int part = 0; part < 3; ++part)  // q's, k's, v's contributions in block_backward's order
    linear_backward(keep.d_qkv.data() + part * wd, 3 * wd, a.ln1.data(), rows, in,
                    w.w_qkv + part * wd, 3 * wd, wd, ws.d_ln.data(), static_cast<T*>(nullptr),
                    static_cast<T*>(nullptr));
  std::copy(d_residual, d_residual + n * c, dx);
  layernorm_backward(ws.d_ln.data(), x, w.ln1_gain, a.ln1_mean.data(), a.ln1_rstd.data(), rows, in,
                     dx, g.ln1_gain, g.ln1_bias);
}
//! [block_backward_input]

//! [block_backward_weight]
template <typename T>
void block_backward_weight(const Config& config, const TensorParallelSlice& slice,
                           const BlockTensors<T>& w, const BlockTensors<T>& g, int batch,
                           int seq_len, const BlockActivations<T>& a,
                           const WeightGradientInputs<T>& keep) {
  const auto [n, c, width, hidden] =
      check_split("block_backward_weight", config, slice, batch, seq_len, a, keep);
  const int rows = static_cast<int>(n), in = static_cast<int>(c);
  const int f = static_cast<int>(hidden), wd = static_cast<int>(width);
  T* const no_dx = nullptr;
  linear_backward(keep.d_out.data(), in, a.fc_gelu.data(), rows, f, w.w_proj, in, in, no_dx,
                  g.w_proj, g.b_proj);
  linear_backward(keep.d_fc.data(), f, a.ln2.data(), rows, in, w.w_fc, f, f, no_dx, g.w_fc, g.b_fc);
  linear_backward(keep.d_residual.data(), in, a.att_out.data(), rows, wd, w.w_out, in, in, no_dx,
                  g.w_out, g.b_out);
  linear_backward(keep.d_qkv.data(), 3 * wd, a.ln1.data(), rows, in, w.w_qkv, 3 * wd, 3 * wd, no_dx,
                  g.w_qkv, g.b_qkv);
}
//! [block_backward_weight]

template struct WeightGradientInputs<float>;
template struct WeightGradientInputs<double>;

#define BOOK_BLOCK_SPLIT_INSTANTIATE(T)                                                           \
  template void block_backward_input<T>(const Config&, const TensorParallelSlice&,                \
                                        const BlockTensors<T>&, const BlockTensors<T>&, int, int, \
                                        const T*, const T*, T*, BlockActivations<T>&,             \
                                        BlockWorkspace<T>&, WeightGradientInputs<T>&);            \
  template void block_backward_weight<T>(                                                         \
      const Config&, const TensorParallelSlice&, const BlockTensors<T>&, const BlockTensors<T>&,  \
      int, int, const BlockActivations<T>&, const WeightGradientInputs<T>&);
BOOK_BLOCK_SPLIT_INSTANTIATE(float)
BOOK_BLOCK_SPLIT_INSTANTIATE(double)

}  // namespace book::pp
