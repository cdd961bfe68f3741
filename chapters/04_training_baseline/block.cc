#include "chapters/04_training_baseline/block.h"

#include <algorithm>

#include "chapters/04_training_baseline/layers.h"
#include "chapters/04_training_baseline/profile.h"
#include "chapters/04_training_baseline/threads.h"
#include "common/check.h"

namespace book::train {
namespace {

constexpr auto kActs = MemoryCategory::kActivations;
constexpr auto kScratch = MemoryCategory::kOther;

// The shapes of one call, checked against the slice, the buffers and the group.
struct Shape {
  int n, c, hs, heads, width, hidden;
};

// The checks every pass needs: `rows` rows fit the buffers, which were sized for this slice, and
// the group matches the slice.
template <typename T>
Shape check_rows(const char* who, const Config& config, const TensorParallelSlice& slice, int rows,
                 const BlockActivations<T>& acts, const BlockWorkspace<T>& workspace,
                 const TensorParallelism<T>& tp) {
  slice.validate(config);
  const std::size_t room = static_cast<std::size_t>(acts.max_batch) * acts.max_seq_len;
  BOOK_CHECK(rows >= 1 && static_cast<std::size_t>(rows) <= room &&
                 static_cast<std::size_t>(rows) <= workspace.max_rows,
             who << ": " << rows << " rows do not fit the activations (" << room
                 << " rows) or the workspace (" << workspace.max_rows << " rows)");
  BOOK_CHECK(acts.qkv.size() == room * 3 * slice.width(config),
             who << ": the activations were sized for another tensor-parallel slice");
  BOOK_CHECK(tp.size() == slice.size && tp.rank() == slice.rank,
             who << ": the seam is rank " << tp.rank() << " of " << tp.size()
                 << " but the slice is rank " << slice.rank << " of " << slice.size
                 << " (a tensor-parallel slice needs its rank's TensorParallelism)");
  BOOK_CHECK(acts.ln1.size() >= static_cast<std::size_t>(tp.held_rows(rows)) * config.d_model,
             who << ": the activations were sized for another split of the rows between ranks");
  return {rows,
          config.d_model,
          config.head_size(),
          slice.heads(config),
          slice.width(config),
          slice.hidden(config)};
}

// The training passes: whole sequences, and the attention probabilities kept for the backward.
template <typename T>
Shape check_call(const char* who, const Config& config, const TensorParallelSlice& slice, int batch,
                 int seq_len, const BlockActivations<T>& acts, const BlockWorkspace<T>& workspace,
                 const TensorParallelism<T>& tp) {
  BOOK_CHECK(batch >= 1 && seq_len >= 1 && batch <= acts.max_batch && seq_len <= acts.max_seq_len &&
                 static_cast<std::size_t>(batch) * seq_len <= workspace.max_rows,
             who << ": " << batch << " × " << seq_len << " rows do not fit the activations ("
                 << acts.max_batch << " × " << acts.max_seq_len << ") or the workspace ("
                 << workspace.max_rows << " rows)");
  const Shape shape = check_rows(who, config, slice, batch * seq_len, acts, workspace, tp);
  BOOK_CHECK(acts.att.size() != 0, who << ": these activations were made without attention "
                                          "probabilities (for block_forward_rows); training "
                                          "needs them");
  return shape;
}

template <typename T>
void zero(TrackedBuffer<T>& buffer, std::size_t count) {
  const LayerScope scope("zeroing and copies");
  parallel_for(count, grain_for(1), [&](std::size_t first, std::size_t last) {
    std::fill(buffer.data() + first, buffer.data() + last, T(0));
  });
}

// out = a + b over n elements (the residual adds), split over the step's threads.
template <typename T>
void add(const T* a, const T* b, std::size_t n, T* out) {
  const LayerScope scope("residual adds");
  parallel_for(n, grain_for(3), [&](std::size_t first, std::size_t last) {
    for (std::size_t i = first; i < last; ++i) out[i] = a[i] + b[i];
  });
}

template <typename T>
void copy(const T* from, std::size_t n, T* to) {
  const LayerScope scope("zeroing and copies");
  parallel_for(n, grain_for(2), [&](std::size_t first, std::size_t last) {
    std::copy(from + first, from + last, to + first);
  });
}

// The exercise train.attention_backward on whole sequences, split over the step's threads: a
// sequence's gradients depend on that sequence alone, so each thread's call sees a smaller batch
// and writes only its sequences' rows of dqkv.
template <typename T>
void attention_backward_by_sequence(const T* dout, const T* qkv, const T* att, int batch,
                                    int seq_len, int heads, int head_size, T* dqkv) {
  const LayerScope scope("attention backward");
  const std::size_t width = static_cast<std::size_t>(heads) * head_size;
  const std::size_t rows = seq_len, att_size = static_cast<std::size_t>(heads) * seq_len * seq_len;
  const std::size_t work = 2 * att_size * head_size;
  parallel_for(batch, grain_for(work), [&](std::size_t b0, std::size_t b1) {
    attention_backward(dout + b0 * rows * width, qkv + b0 * rows * 3 * width, att + b0 * att_size,
                       static_cast<int>(b1 - b0), seq_len, heads, head_size,
                       dqkv + b0 * rows * 3 * width);
  });
}

}  // namespace

template <typename T>
BlockActivations<T>::BlockActivations(const Config& config, const TensorParallelSlice& slice,
                                      int max_batch, int max_seq_len, MemoryTracker* tracker,
                                      bool attention_probabilities, const TensorParallelism<T>* tp)
    : max_batch(max_batch), max_seq_len(max_seq_len) {
  slice.validate(config);
  BOOK_CHECK(max_batch >= 1 && max_seq_len >= 1, "BlockActivations: room for "
                                                     << max_batch << " × " << max_seq_len
                                                     << " rows; both must be >= 1");
  const std::size_t n = static_cast<std::size_t>(max_batch) * max_seq_len, c = config.d_model;
  const std::size_t width = slice.width(config), hidden = slice.hidden(config);
  // The rows held between the regions: all of them, or this rank's share (the seam's split).
  const std::size_t held = tp != nullptr ? tp->held_room(n) : n;
  ln1 = TrackedBuffer<T>(held * c, kActs, tracker);
  ln1_mean = TrackedBuffer<T>(held, kActs, tracker);
  ln1_rstd = TrackedBuffer<T>(held, kActs, tracker);
  qkv = TrackedBuffer<T>(n * 3 * width, kActs, tracker);
  if (attention_probabilities)
    att = TrackedBuffer<T>(n * slice.heads(config) * max_seq_len, kActs, tracker);
  att_out = TrackedBuffer<T>(n * width, kActs, tracker);
  residual = TrackedBuffer<T>(held * c, kActs, tracker);
  ln2 = TrackedBuffer<T>(held * c, kActs, tracker);
  ln2_mean = TrackedBuffer<T>(held, kActs, tracker);
  ln2_rstd = TrackedBuffer<T>(held, kActs, tracker);
  fc = TrackedBuffer<T>(n * hidden, kActs, tracker);
  fc_gelu = TrackedBuffer<T>(n * hidden, kActs, tracker);
}

template <typename T>
std::size_t BlockActivations<T>::bytes() const {
  std::size_t total = 0;
  for (const auto* b : {&ln1, &ln1_mean, &ln1_rstd, &qkv, &att, &att_out, &residual, &ln2,
                        &ln2_mean, &ln2_rstd, &fc, &fc_gelu})
    total += b->bytes();
  return total;
}

template <typename T>
BlockWorkspace<T>::BlockWorkspace(const Config& config, const TensorParallelSlice& slice,
                                  int max_batch, int max_seq_len, MemoryTracker* tracker)
    : max_rows(static_cast<std::size_t>(max_batch) * max_seq_len) {
  slice.validate(config);
  const std::size_t n = max_rows, c = config.d_model;
  const std::size_t width = slice.width(config), hidden = slice.hidden(config);
  partial = TrackedBuffer<T>(n * c, kScratch, tracker);
  d_residual = TrackedBuffer<T>(n * c, kScratch, tracker);
  d_ln = TrackedBuffer<T>(n * c, kScratch, tracker);
  d_gelu = TrackedBuffer<T>(n * hidden, kScratch, tracker);
  d_fc = TrackedBuffer<T>(n * hidden, kScratch, tracker);
  d_att_out = TrackedBuffer<T>(n * width, kScratch, tracker);
  d_qkv = TrackedBuffer<T>(n * 3 * width, kScratch, tracker);
}

template <typename T>
std::size_t BlockWorkspace<T>::bytes() const {
  std::size_t total = 0;
  for (const auto* b : {&partial, &d_residual, &d_ln, &d_gelu, &d_fc, &d_att_out, &d_qkv})
    total += b->bytes();
  return total;
}

template <typename T>
void block_forward(const Config& config, const TensorParallelSlice& slice, const BlockTensors<T>& w,
                   int batch, int seq_len, const T* x, T* y, BlockActivations<T>& a,
                   BlockWorkspace<T>& ws, TensorParallelism<T>* tp) {
  TensorParallelism<T>& seam = tp != nullptr ? *tp : one_device<T>();
  const Shape shape = check_call("block_forward", config, slice, batch, seq_len, a, ws, seam);
  // Causal attention within each of the batch's sequences, keeping the probabilities for the
  // backward pass.
  const AttentionCore<T> causal = [&](const T* qkv, T* att_out) {
    attention_forward(qkv, batch, seq_len, shape.heads, shape.hs, a.att.data(), att_out);
  };
  block_forward_rows(config, slice, w, shape.n, x, y, a, ws, causal, tp);
}

template <typename T>
void block_forward_rows(const Config& config, const TensorParallelSlice& slice,
                        const BlockTensors<T>& w, int rows, const T* x, T* y,
                        BlockActivations<T>& a, BlockWorkspace<T>& ws,
                        const AttentionCore<T>& attention, TensorParallelism<T>* tp) {
  TensorParallelism<T>& seam = tp != nullptr ? *tp : one_device<T>();
  const auto [n, c, hs, heads, width, hidden] =
      check_rows("block_forward_rows", config, slice, rows, a, ws, seam);
  const std::size_t held_c = static_cast<std::size_t>(seam.held_rows(n)) * c;
  T* partial = ws.partial.data();
  // The projections go through the seam: column-parallel into a region (this rank's columns),
  // row-parallel out of it (this rank's rows, summed over the ranks, the replicated bias added
  // once); on one device, chapter 4's linear_forward, or an engine's own weights (block.h).
  const T* ln1 = seam.norm_forward(x, w.ln1_gain, w.ln1_bias, n, c, a.ln1.data(), a.ln1_mean.data(),
                                   a.ln1_rstd.data());
  //! [tensor_parallel_attention]
  // Column-parallel: this rank stores its heads' columns of W_qkv, its q, k and v side by side,
  // so one product makes all three.
  seam.column_forward({Projection::kQkv, w.w_qkv, w.b_qkv, c, 3 * width}, ln1, n, a.qkv.data());
  attention(a.qkv.data(), a.att_out.data());
  // Row-parallel: this rank stores its heads' rows of W_out.
  seam.row_forward({Projection::kOut, w.w_out, w.b_out, width, c}, a.att_out.data(), n, partial);
  //! [tensor_parallel_attention]
  add(x, partial, held_c, a.residual.data());

  const T* ln2 = seam.norm_forward(a.residual.data(), w.ln2_gain, w.ln2_bias, n, c, a.ln2.data(),
                                   a.ln2_mean.data(), a.ln2_rstd.data());
  seam.column_forward({Projection::kFc, w.w_fc, w.b_fc, c, hidden}, ln2, n, a.fc.data());
  gelu_forward(a.fc.data(), static_cast<std::size_t>(n) * hidden, a.fc_gelu.data());
  seam.row_forward({Projection::kProj, w.w_proj, w.b_proj, hidden, c}, a.fc_gelu.data(), n,
                   partial);
  add(a.residual.data(), partial, held_c, y);
}

template <typename T>
void block_backward(const Config& config, const TensorParallelSlice& slice,
                    const BlockTensors<T>& w, const BlockTensors<T>& g, int batch, int seq_len,
                    const T* x, const T* dy, T* dx, BlockActivations<T>& a, BlockWorkspace<T>& ws,
                    TensorParallelism<T>* tp, const AttentionBackwardCore<T>& attention_core) {
  TensorParallelism<T>& seam = tp != nullptr ? *tp : one_device<T>();
  const auto [n, c, hs, heads, width, hidden] =
      check_call("block_backward", config, slice, batch, seq_len, a, ws, seam);
  const std::size_t nc = static_cast<std::size_t>(n) * c;
  const std::size_t held_c = static_cast<std::size_t>(seam.held_rows(n)) * c;
  const std::size_t n_hidden = static_cast<std::size_t>(n) * hidden;
  const std::size_t n_width = static_cast<std::size_t>(n) * width;

  // y = r + MLP(LN2(r)): dr = dy (the residual path) + the MLP path's contribution.
  T* d_residual = ws.d_residual.data();
  copy(dy, held_c, d_residual);
  zero(ws.d_gelu, n_hidden);
  zero(ws.d_fc, n_hidden);
  // Every rank adds the replicated b_proj's gradient from the rows it holds.
  seam.row_backward({Projection::kProj, w.w_proj, w.b_proj, hidden, c}, {g.w_proj, g.b_proj},
                    a.fc_gelu.data(), dy, n, ws.d_gelu.data());
  gelu_backward(ws.d_gelu.data(), a.fc.data(), n_hidden, ws.d_fc.data());
  zero(ws.d_ln, nc);
  seam.column_backward({Projection::kFc, w.w_fc, w.b_fc, c, hidden}, {g.w_fc, g.b_fc},
                       seam.whole_rows(a.ln2.data(), n, c), ws.d_fc.data(), n, ws.d_ln.data());
  seam.norm_backward(ws.d_ln.data(), a.residual.data(), w.ln2_gain, a.ln2_mean.data(),
                     a.ln2_rstd.data(), n, c, d_residual, g.ln2_gain, g.ln2_bias);

  // r = x + Attn(LN1(x)).
  zero(ws.d_att_out, n_width);
  seam.row_backward({Projection::kOut, w.w_out, w.b_out, width, c}, {g.w_out, g.b_out},
                    a.att_out.data(), d_residual, n, ws.d_att_out.data());
  zero(ws.d_qkv, 3 * n_width);
  if (attention_core)  // another attention kernel's backward (memory_seams.h)
    attention_core(ws.d_att_out.data(), a.qkv.data(), a.att_out.data(), a.att.data(),
                   ws.d_qkv.data());
  else
    attention_backward_by_sequence(ws.d_att_out.data(), a.qkv.data(), a.att.data(), batch, seq_len,
                                   heads, hs, ws.d_qkv.data());
  zero(ws.d_ln, nc);
  seam.column_backward({Projection::kQkv, w.w_qkv, w.b_qkv, c, 3 * width}, {g.w_qkv, g.b_qkv},
                       seam.whole_rows(a.ln1.data(), n, c), ws.d_qkv.data(), n, ws.d_ln.data());
  copy(d_residual, held_c, dx);
  seam.norm_backward(ws.d_ln.data(), x, w.ln1_gain, a.ln1_mean.data(), a.ln1_rstd.data(), n, c, dx,
                     g.ln1_gain, g.ln1_bias);
}

template struct BlockActivations<float>;
template struct BlockActivations<double>;
template struct BlockWorkspace<float>;
template struct BlockWorkspace<double>;

#define BOOK_BLOCK_INSTANTIATE(T)                                                                  \
  template void block_forward<T>(const Config&, const TensorParallelSlice&,                        \
                                 const BlockTensors<T>&, int, int, const T*, T*,                   \
                                 BlockActivations<T>&, BlockWorkspace<T>&, TensorParallelism<T>*); \
  template void block_forward_rows<T>(                                                             \
      const Config&, const TensorParallelSlice&, const BlockTensors<T>&, int, const T*, T*,        \
      BlockActivations<T>&, BlockWorkspace<T>&, const AttentionCore<T>&, TensorParallelism<T>*);  \
  template void block_backward<T>(                                                                 \
      const Config&, const TensorParallelSlice&, const BlockTensors<T>&, const BlockTensors<T>&,   \
      int, int, const T*, const T*, T*, BlockActivations<T>&, BlockWorkspace<T>&,                  \
      TensorParallelism<T>*, const AttentionBackwardCore<T>&);

BOOK_BLOCK_INSTANTIATE(float)
BOOK_BLOCK_INSTANTIATE(double)

}  // namespace book::train
