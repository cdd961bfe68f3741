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
                 const TensorParallelComm<T>* comm) {
  slice.validate(config);
  const std::size_t room = static_cast<std::size_t>(acts.max_batch) * acts.max_seq_len;
  BOOK_CHECK(rows >= 1 && static_cast<std::size_t>(rows) <= room &&
                 static_cast<std::size_t>(rows) <= workspace.max_rows,
             who << ": " << rows << " rows do not fit the activations (" << room
                 << " rows) or the workspace (" << workspace.max_rows << " rows)");
  BOOK_CHECK(acts.qkv.size() == room * 3 * slice.width(config),
             who << ": the activations were sized for another tensor-parallel slice");
  if (slice.size > 1)
    BOOK_CHECK(comm != nullptr, who << ": tensor-parallel rank " << slice.rank << " of "
                                    << slice.size << " needs a TensorParallelComm");
  if (comm != nullptr)
    BOOK_CHECK(comm->size() == slice.size && comm->rank() == slice.rank,
               who << ": the group is rank " << comm->rank() << " of " << comm->size()
                   << " but the slice is rank " << slice.rank << " of " << slice.size);
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
                 const TensorParallelComm<T>* comm) {
  BOOK_CHECK(batch >= 1 && seq_len >= 1 && batch <= acts.max_batch && seq_len <= acts.max_seq_len &&
                 static_cast<std::size_t>(batch) * seq_len <= workspace.max_rows,
             who << ": " << batch << " × " << seq_len << " rows do not fit the activations ("
                 << acts.max_batch << " × " << acts.max_seq_len << ") or the workspace ("
                 << workspace.max_rows << " rows)");
  const Shape shape = check_rows(who, config, slice, batch * seq_len, acts, workspace, comm);
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

template <typename T>
void layernorm_backward_timed(const T* dout, const T* x, const T* gain, const T* mean,
                              const T* rstd, int rows, int channels, T* dx, T* dgain, T* dbias) {
  const LayerScope scope("LayerNorm backward");
  layernorm_backward(dout, x, gain, mean, rstd, rows, channels, dx, dgain, dbias);
}

}  // namespace

template <typename T>
BlockActivations<T>::BlockActivations(const Config& config, const TensorParallelSlice& slice,
                                      int max_batch, int max_seq_len, MemoryTracker* tracker,
                                      bool attention_probabilities)
    : max_batch(max_batch), max_seq_len(max_seq_len) {
  slice.validate(config);
  BOOK_CHECK(max_batch >= 1 && max_seq_len >= 1, "BlockActivations: room for "
                                                     << max_batch << " × " << max_seq_len
                                                     << " rows; both must be >= 1");
  const std::size_t n = static_cast<std::size_t>(max_batch) * max_seq_len, c = config.d_model;
  const std::size_t width = slice.width(config), hidden = slice.hidden(config);
  ln1 = TrackedBuffer<T>(n * c, kActs, tracker);
  ln1_mean = TrackedBuffer<T>(n, kActs, tracker);
  ln1_rstd = TrackedBuffer<T>(n, kActs, tracker);
  qkv = TrackedBuffer<T>(n * 3 * width, kActs, tracker);
  if (attention_probabilities)
    att = TrackedBuffer<T>(n * slice.heads(config) * max_seq_len, kActs, tracker);
  att_out = TrackedBuffer<T>(n * width, kActs, tracker);
  residual = TrackedBuffer<T>(n * c, kActs, tracker);
  ln2 = TrackedBuffer<T>(n * c, kActs, tracker);
  ln2_mean = TrackedBuffer<T>(n, kActs, tracker);
  ln2_rstd = TrackedBuffer<T>(n, kActs, tracker);
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
                   BlockWorkspace<T>& ws, TensorParallelComm<T>* comm) {
  const Shape shape = check_call("block_forward", config, slice, batch, seq_len, a, ws, comm);
  // Causal attention within each of the batch's sequences, keeping the probabilities for the
  // backward pass.
  const AttentionCore<T> causal = [&](const T* qkv, T* att_out) {
    attention_forward(qkv, batch, seq_len, shape.heads, shape.hs, a.att.data(), att_out);
  };
  block_forward_rows(config, slice, w, shape.n, x, y, a, ws, causal, comm);
}

template <typename T>
void block_forward_rows(const Config& config, const TensorParallelSlice& slice,
                        const BlockTensors<T>& w, int rows, const T* x, T* y,
                        BlockActivations<T>& a, BlockWorkspace<T>& ws,
                        const AttentionCore<T>& attention, TensorParallelComm<T>* comm,
                        const LinearCore<T>& linear) {
  const auto [n, c, hs, heads, width, hidden] =
      check_rows("block_forward_rows", config, slice, rows, a, ws, comm);
  BOOK_CHECK(!linear || slice.size == 1,
             "block_forward_rows: a LinearCore computes whole projections; this is tensor-parallel "
             "slice "
                 << slice.rank << "/" << slice.size);
  const std::size_t nc = static_cast<std::size_t>(n) * c;
  T* partial = ws.partial.data();
  // The caller's projection if it gave one, else this block's own weights (with the strides and
  // the rank-0 bias rule of a tensor-parallel shard).
  const auto project = [&](Projection which, const T* in_rows, int in, const T* weight, int out,
                           const T* bias, T* out_rows) {
    if (linear)
      linear(which, in_rows, n, out_rows);
    else
      linear_forward(in_rows, n, in, weight, out, bias, out, out_rows, out);
  };

  layernorm_forward(x, w.ln1_gain, w.ln1_bias, n, c, a.ln1.data(), a.ln1_mean.data(),
                    a.ln1_rstd.data());
  //! [tensor_parallel_attention]
  // Column-parallel: this rank stores its heads' columns of W_qkv, its q, k and v side by side,
  // so one product makes all three.
  project(Projection::kQkv, a.ln1.data(), c, w.w_qkv, 3 * width, w.b_qkv, a.qkv.data());
  attention(a.qkv.data(), a.att_out.data());
  // Row-parallel: this rank stores its heads' rows of W_out. The replicated bias is added once,
  // by rank 0, so the all-reduce sums it once.
  project(Projection::kOut, a.att_out.data(), width, w.w_out, c,
          slice.rank == 0 ? w.b_out : nullptr, partial);
  if (comm) comm->all_reduce(partial, nc);
  //! [tensor_parallel_attention]
  add(x, partial, nc, a.residual.data());

  layernorm_forward(a.residual.data(), w.ln2_gain, w.ln2_bias, n, c, a.ln2.data(),
                    a.ln2_mean.data(), a.ln2_rstd.data());
  project(Projection::kFc, a.ln2.data(), c, w.w_fc, hidden, w.b_fc, a.fc.data());
  gelu_forward(a.fc.data(), static_cast<std::size_t>(n) * hidden, a.fc_gelu.data());
  project(Projection::kProj, a.fc_gelu.data(), hidden, w.w_proj, c,
          slice.rank == 0 ? w.b_proj : nullptr, partial);
  if (comm) comm->all_reduce(partial, nc);
  add(a.residual.data(), partial, nc, y);
}

template <typename T>
void block_backward(const Config& config, const TensorParallelSlice& slice,
                    const BlockTensors<T>& w, const BlockTensors<T>& g, int batch, int seq_len,
                    const T* x, const T* dy, T* dx, BlockActivations<T>& a, BlockWorkspace<T>& ws,
                    TensorParallelComm<T>* comm, const AttentionBackwardCore<T>& attention_core) {
  const auto [n, c, hs, heads, width, hidden] =
      check_call("block_backward", config, slice, batch, seq_len, a, ws, comm);
  const std::size_t nc = static_cast<std::size_t>(n) * c;
  const std::size_t n_hidden = static_cast<std::size_t>(n) * hidden;
  const std::size_t n_width = static_cast<std::size_t>(n) * width;

  // y = r + MLP(LN2(r)): dr = dy (the residual path) + the MLP path's contribution.
  T* d_residual = ws.d_residual.data();
  copy(dy, nc, d_residual);
  zero(ws.d_gelu, n_hidden);
  zero(ws.d_fc, n_hidden);
  // Every rank adds the replicated b_proj's gradient (the same on each), so replicas stay equal.
  linear_backward(dy, c, a.fc_gelu.data(), n, hidden, w.w_proj, c, c, ws.d_gelu.data(), g.w_proj,
                  g.b_proj);
  gelu_backward(ws.d_gelu.data(), a.fc.data(), n_hidden, ws.d_fc.data());
  zero(ws.d_ln, nc);
  linear_backward(ws.d_fc.data(), hidden, a.ln2.data(), n, c, w.w_fc, hidden, hidden,
                  ws.d_ln.data(), g.w_fc, g.b_fc);
  if (comm) comm->all_reduce(ws.d_ln.data(), nc);  // LN2's output fed every rank's slice
  layernorm_backward_timed(ws.d_ln.data(), a.residual.data(), w.ln2_gain, a.ln2_mean.data(),
                           a.ln2_rstd.data(), n, c, d_residual, g.ln2_gain, g.ln2_bias);

  // r = x + Attn(LN1(x)).
  zero(ws.d_att_out, n_width);
  linear_backward(d_residual, c, a.att_out.data(), n, width, w.w_out, c, c, ws.d_att_out.data(),
                  g.w_out, g.b_out);
  zero(ws.d_qkv, 3 * n_width);
  if (attention_core)  // another attention kernel's backward (memory_seams.h)
    attention_core(ws.d_att_out.data(), a.qkv.data(), a.att_out.data(), a.att.data(),
                   ws.d_qkv.data());
  else
    attention_backward_by_sequence(ws.d_att_out.data(), a.qkv.data(), a.att.data(), batch, seq_len,
                                   heads, hs, ws.d_qkv.data());
  zero(ws.d_ln, nc);
  // dLN1 sums q's, k's and v's contributions one after another (as three products, so each
  // element's sum keeps that order); the weight and bias gradients of all three are one product.
  for (int part = 0; part < 3; ++part)
    linear_backward(ws.d_qkv.data() + part * width, 3 * width, a.ln1.data(), n, c,
                    w.w_qkv + part * width, 3 * width, width, ws.d_ln.data(),
                    static_cast<T*>(nullptr), static_cast<T*>(nullptr));
  linear_backward(ws.d_qkv.data(), 3 * width, a.ln1.data(), n, c, w.w_qkv, 3 * width, 3 * width,
                  static_cast<T*>(nullptr), g.w_qkv, g.b_qkv);
  if (comm) comm->all_reduce(ws.d_ln.data(), nc);
  copy(d_residual, nc, dx);
  layernorm_backward_timed(ws.d_ln.data(), x, w.ln1_gain, a.ln1_mean.data(), a.ln1_rstd.data(), n,
                           c, dx, g.ln1_gain, g.ln1_bias);
}

template struct BlockActivations<float>;
template struct BlockActivations<double>;
template struct BlockWorkspace<float>;
template struct BlockWorkspace<double>;

#define BOOK_BLOCK_INSTANTIATE(T)                                                                \
  template void block_forward<T>(                                                                \
      const Config&, const TensorParallelSlice&, const BlockTensors<T>&, int, int, const T*, T*, \
      BlockActivations<T>&, BlockWorkspace<T>&, TensorParallelComm<T>*);                         \
  template void block_forward_rows<T>(                                                           \
      const Config&, const TensorParallelSlice&, const BlockTensors<T>&, int, const T*, T*,      \
      BlockActivations<T>&, BlockWorkspace<T>&, const AttentionCore<T>&, TensorParallelComm<T>*, \
      const LinearCore<T>&);                                                                     \
  template void block_backward<T>(                                                               \
      const Config&, const TensorParallelSlice&, const BlockTensors<T>&, const BlockTensors<T>&, \
      int, int, const T*, const T*, T*, BlockActivations<T>&, BlockWorkspace<T>&,                \
      TensorParallelComm<T>*, const AttentionBackwardCore<T>&);

BOOK_BLOCK_INSTANTIATE(float)
BOOK_BLOCK_INSTANTIATE(double)

}  // namespace book::train
