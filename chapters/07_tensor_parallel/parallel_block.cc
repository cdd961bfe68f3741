// The tensor-parallel block: chapter 4's attention and GELU between this chapter's parallel
// linears, with the LayerNorms whole (f and g) or on this rank's tokens (gather and scatter).
#include "chapters/07_tensor_parallel/parallel_block.h"

#include <algorithm>
#include <span>

#include "chapters/04_training_baseline/layers.h"
#include "chapters/07_tensor_parallel/parallel_linear.h"
#include "chapters/07_tensor_parallel/sequence_parallel_norm.h"
#include "common/check.h"

namespace book::tp {
namespace {

constexpr auto kActs = MemoryCategory::kActivations;
constexpr auto kScratch = MemoryCategory::kOther;

bool on(SequenceParallel sp) { return sp == SequenceParallel::kOn; }

// The shapes of one call, checked against the slice, the buffers and the group.
struct Shape {
  int n, held, c, hs, heads, width, hidden;
};

template <typename T>
Shape check_call(const char* who, const train::Config& config,
                 const train::TensorParallelSlice& slice, SequenceParallel sp, int batch,
                 int seq_len, const ParallelBlockActivations<T>& acts,
                 const ParallelWorkspace<T>& workspace, const train::TensorParallelComm<T>& comm) {
  slice.validate(config);
  BOOK_CHECK(comm.size() == slice.size && comm.rank() == slice.rank,
             who << ": the group is rank " << comm.rank() << " of " << comm.size()
                 << " but the slice is rank " << slice.rank << " of " << slice.size);
  const std::size_t n = static_cast<std::size_t>(batch) * seq_len;
  BOOK_CHECK(batch >= 1 && seq_len >= 1 && n <= workspace.max_tokens &&
                 static_cast<std::size_t>(seq_len) * seq_len * batch * slice.heads(config) <=
                     acts.att.size() &&
                 n * 3 * slice.width(config) <= acts.qkv.size(),
             who << ": " << batch << " × " << seq_len
                 << " tokens do not fit the activations or the workspace (room for "
                 << workspace.max_tokens << " tokens)");
  const int held = held_tokens(static_cast<int>(n), slice.size, sp);
  BOOK_CHECK(acts.ln1.size() >= static_cast<std::size_t>(held) * config.d_model &&
                 (!on(sp) || workspace.whole.size() >= n * config.d_model),
             who << ": the activations or the workspace were made for another sequence-parallel "
                    "setting");
  return {static_cast<int>(n), held,
          config.d_model,      config.head_size(),
          slice.heads(config), slice.width(config),
          slice.hidden(config)};
}

// Room for `tokens` tokens held by this rank: all of them, or 1/t rounded up.
std::size_t held_room(std::size_t tokens, int ranks, SequenceParallel sp) {
  return on(sp) ? (tokens + ranks - 1) / ranks : tokens;
}

}  // namespace

int held_tokens(int tokens, int ranks, SequenceParallel sequence_parallel) {
  if (!on(sequence_parallel)) return tokens;
  BOOK_CHECK(tokens % ranks == 0, "sequence parallelism splits the "
                                      << tokens << " tokens of a micro-batch over " << ranks
                                      << " tensor-parallel ranks unevenly; use a batch "
                                         "× sequence length divisible by "
                                      << ranks);
  return tokens / ranks;
}

template <typename T>
ParallelBlockActivations<T>::ParallelBlockActivations(const train::Config& config,
                                                      const train::TensorParallelSlice& slice,
                                                      SequenceParallel sp, int max_batch,
                                                      int max_seq_len, MemoryTracker* tracker) {
  slice.validate(config);
  BOOK_CHECK(max_batch >= 1 && max_seq_len >= 1, "ParallelBlockActivations: room for "
                                                     << max_batch << " × " << max_seq_len
                                                     << " tokens; both must be >= 1");
  const std::size_t n = static_cast<std::size_t>(max_batch) * max_seq_len, c = config.d_model;
  const std::size_t held = held_room(n, slice.size, sp);
  const std::size_t width = slice.width(config), hidden = slice.hidden(config);
  ln1 = TrackedBuffer<T>(held * c, kActs, tracker);
  ln1_mean = TrackedBuffer<T>(held, kActs, tracker);
  ln1_rstd = TrackedBuffer<T>(held, kActs, tracker);
  qkv = TrackedBuffer<T>(n * 3 * width, kActs, tracker);
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
std::size_t ParallelBlockActivations<T>::bytes() const {
  std::size_t total = 0;
  for (const auto* b : {&ln1, &ln1_mean, &ln1_rstd, &qkv, &att, &att_out, &residual, &ln2,
                        &ln2_mean, &ln2_rstd, &fc, &fc_gelu})
    total += b->bytes();
  return total;
}

template <typename T>
ParallelWorkspace<T>::ParallelWorkspace(const train::Config& config,
                                        const train::TensorParallelSlice& slice,
                                        SequenceParallel sp, int max_batch, int max_seq_len,
                                        MemoryTracker* tracker)
    : max_tokens(static_cast<std::size_t>(max_batch) * max_seq_len) {
  slice.validate(config);
  const std::size_t n = max_tokens, c = config.d_model, held = held_room(n, slice.size, sp);
  const std::size_t width = slice.width(config), hidden = slice.hidden(config);
  whole = TrackedBuffer<T>(on(sp) ? n * c : 0, kScratch, tracker);
  partial = TrackedBuffer<T>(n * c, kScratch, tracker);
  dy_whole = TrackedBuffer<T>(on(sp) ? n * c : 0, kScratch, tracker);
  d_ln_whole = TrackedBuffer<T>(n * c, kScratch, tracker);
  d_shard = TrackedBuffer<T>(held * c, kScratch, tracker);
  d_residual = TrackedBuffer<T>(held * c, kScratch, tracker);
  d_gelu = TrackedBuffer<T>(n * hidden, kScratch, tracker);
  d_fc = TrackedBuffer<T>(n * hidden, kScratch, tracker);
  d_att_out = TrackedBuffer<T>(n * width, kScratch, tracker);
  d_qkv = TrackedBuffer<T>(n * 3 * width, kScratch, tracker);
}

template <typename T>
std::size_t ParallelWorkspace<T>::bytes() const {
  std::size_t total = 0;
  for (const auto* b : {&whole, &partial, &dy_whole, &d_ln_whole, &d_shard, &d_residual, &d_gelu,
                        &d_fc, &d_att_out, &d_qkv})
    total += b->bytes();
  return total;
}

//! [parallel_block_forward]
template <typename T>
void parallel_block_forward(const train::Config& config, const train::TensorParallelSlice& slice,
                            SequenceParallel sp, const train::BlockTensors<T>& w, int batch,
                            int seq_len, const T* x, T* y, ParallelBlockActivations<T>& a,
                            ParallelWorkspace<T>& ws, train::TensorParallelComm<T>& comm) {
  const auto [n, held, c, hs, heads, width, hidden] =
      check_call("parallel_block_forward", config, slice, sp, batch, seq_len, a, ws, comm);
  const std::size_t held_c = static_cast<std::size_t>(held) * c;
  // LayerNorm, then the whole normalised input for the column-parallel linear after it: f (it is
  // whole already) or the gather of every rank's tokens.
  auto norm = [&](const T* in, const T* gain, const T* bias, T* out, T* mean, T* rstd) -> const T* {
    if (on(sp)) {
      sequence_parallel_norm_forward(in, gain, bias, held, c, out, mean, rstd, ws.whole.data(),
                                     comm);
      return ws.whole.data();
    }
    train::layernorm_forward(in, gain, bias, n, c, out, mean, rstd);
    f_forward(std::span<const T>(out, held_c), comm);
    return out;
  };

  const T* ln1 =
      norm(x, w.ln1_gain, w.ln1_bias, a.ln1.data(), a.ln1_mean.data(), a.ln1_rstd.data());
  column_parallel_linear_forward<T>({w.w_qkv, w.b_qkv, c, 3 * width}, ln1, n, a.qkv.data());
  train::attention_forward(a.qkv.data(), batch, seq_len, heads, hs, a.att.data(), a.att_out.data());
  row_parallel_linear_forward<T>({w.w_out, w.b_out, width, c}, a.att_out.data(), n,
                                 ws.partial.data(), a.residual.data(), comm, sp);
  for (std::size_t i = 0; i < held_c; ++i) a.residual[i] += x[i];

  const T* ln2 = norm(a.residual.data(), w.ln2_gain, w.ln2_bias, a.ln2.data(), a.ln2_mean.data(),
                      a.ln2_rstd.data());
  column_parallel_linear_forward<T>({w.w_fc, w.b_fc, c, hidden}, ln2, n, a.fc.data());
  train::gelu_forward(a.fc.data(), static_cast<std::size_t>(n) * hidden, a.fc_gelu.data());
  row_parallel_linear_forward<T>({w.w_proj, w.b_proj, hidden, c}, a.fc_gelu.data(), n,
                                 ws.partial.data(), y, comm, sp);
  for (std::size_t i = 0; i < held_c; ++i) y[i] += a.residual[i];
}
//! [parallel_block_forward]

template <typename T>
void parallel_block_backward(const train::Config& config, const train::TensorParallelSlice& slice,
                             SequenceParallel sp, const train::BlockTensors<T>& w,
                             const train::BlockTensors<T>& g, int batch, int seq_len, const T* x,
                             const T* dy, T* dx, ParallelBlockActivations<T>& a,
                             ParallelWorkspace<T>& ws, train::TensorParallelComm<T>& comm) {
  const auto [n, held, c, hs, heads, width, hidden] =
      check_call("parallel_block_backward", config, slice, sp, batch, seq_len, a, ws, comm);
  const std::size_t held_c = static_cast<std::size_t>(held) * c;
  const std::size_t n_hidden = static_cast<std::size_t>(n) * hidden;
  // The whole normalised input again, for a column-parallel weight gradient: with sequence
  // parallelism only this rank's tokens were kept, so they are gathered once more.
  auto whole_input = [&](const TrackedBuffer<T>& ln) -> const T* {
    if (!on(sp)) return ln.data();
    gather_forward(std::span<const T>(ln.data(), held_c),
                   std::span<T>(ws.whole.data(), static_cast<std::size_t>(n) * c), comm);
    return ws.whole.data();
  };
  // A LayerNorm's backward from its column-parallel linears' input gradient d_ln_whole: after
  // f's all-reduce (off), or through the gather's reduce-scatter (on).
  auto norm_backward = [&](const T* in, const T* gain, const T* mean, const T* rstd, T* d_in,
                           T* dgain, T* dbias) {
    if (on(sp))
      sequence_parallel_norm_backward(ws.d_ln_whole.data(), in, gain, mean, rstd, held, c,
                                      ws.d_shard.data(), d_in, dgain, dbias, comm);
    else
      train::layernorm_backward(ws.d_ln_whole.data(), in, gain, mean, rstd, n, c, d_in, dgain,
                                dbias);
  };

  // y = r + MLP(LN2(r)): dr = dy (the residual path) + the MLP path's contribution.
  T* d_residual = ws.d_residual.data();
  std::copy(dy, dy + held_c, d_residual);
  row_parallel_linear_backward<T>({w.w_proj, w.b_proj, hidden, c}, {g.w_proj, g.b_proj},
                                  a.fc_gelu.data(), dy, n, ws.dy_whole.data(), ws.d_gelu.data(),
                                  comm, sp);
  std::fill(ws.d_fc.data(), ws.d_fc.data() + n_hidden, T(0));
  train::gelu_backward(ws.d_gelu.data(), a.fc.data(), n_hidden, ws.d_fc.data());
  column_parallel_linear_backward<T>({w.w_fc, w.b_fc, c, hidden}, {g.w_fc, g.b_fc},
                                     whole_input(a.ln2), ws.d_fc.data(), n, ws.d_ln_whole.data(),
                                     comm, sp);
  norm_backward(a.residual.data(), w.ln2_gain, a.ln2_mean.data(), a.ln2_rstd.data(), d_residual,
                g.ln2_gain, g.ln2_bias);

  // r = x + Attn(LN1(x)).
  row_parallel_linear_backward<T>({w.w_out, w.b_out, width, c}, {g.w_out, g.b_out},
                                  a.att_out.data(), d_residual, n, ws.dy_whole.data(),
                                  ws.d_att_out.data(), comm, sp);
  train::attention_backward(ws.d_att_out.data(), a.qkv.data(), a.att.data(), batch, seq_len, heads,
                            hs, ws.d_qkv.data());
  column_parallel_linear_backward<T>({w.w_qkv, w.b_qkv, c, 3 * width}, {g.w_qkv, g.b_qkv},
                                     whole_input(a.ln1), ws.d_qkv.data(), n, ws.d_ln_whole.data(),
                                     comm, sp);
  std::copy(d_residual, d_residual + held_c, dx);
  norm_backward(x, w.ln1_gain, a.ln1_mean.data(), a.ln1_rstd.data(), dx, g.ln1_gain, g.ln1_bias);
}

template struct ParallelBlockActivations<float>;
template struct ParallelBlockActivations<double>;
template struct ParallelWorkspace<float>;
template struct ParallelWorkspace<double>;

#define BOOK_TP_BLOCK(T)                                                                           \
  template void parallel_block_forward<T>(const train::Config&, const train::TensorParallelSlice&, \
                                          SequenceParallel, const train::BlockTensors<T>&, int,    \
                                          int, const T*, T*, ParallelBlockActivations<T>&,         \
                                          ParallelWorkspace<T>&, train::TensorParallelComm<T>&);   \
  template void parallel_block_backward<T>(                                                        \
      const train::Config&, const train::TensorParallelSlice&, SequenceParallel,                   \
      const train::BlockTensors<T>&, const train::BlockTensors<T>&, int, int, const T*, const T*,  \
      T*, ParallelBlockActivations<T>&, ParallelWorkspace<T>&, train::TensorParallelComm<T>&);

BOOK_TP_BLOCK(float)
BOOK_TP_BLOCK(double)

}  // namespace book::tp
