// The tensor-parallel seam: chapter 4's block, embedding and head on one rank's shard, through
// this chapter's exercises.
#include "chapters/07_tensor_parallel/tensor_parallel_seam.h"

#include <algorithm>
#include <string>

#include "chapters/04_training_baseline/layers.h"
#include "chapters/07_tensor_parallel/parallel_cross_entropy.h"
#include "chapters/07_tensor_parallel/parallel_linear.h"
#include "chapters/07_tensor_parallel/sequence_parallel_norm.h"
#include "chapters/07_tensor_parallel/vocab_parallel.h"
#include "common/check.h"

namespace book::tp {
namespace {

constexpr auto kScratch = MemoryCategory::kOther;

// The replicated tensors whose gradients a sequence-parallel rank sums over its own tokens only.
bool token_sharded(const std::string& name) {
  for (const char* suffix :
       {"ln1_gain", "ln1_bias", "ln2_gain", "ln2_bias", "b_out", "b_proj", "lnf_gain", "lnf_bias"})
    if (name.ends_with(suffix)) return true;
  return false;
}

template <typename T>
LinearShard<T> shard(const train::ProjectionWeights<T>& p) {
  return {p.w, p.bias, p.in, p.out};
}

}  // namespace

int held_tokens(int tokens, int ranks, SequenceParallel sequence_parallel) {
  if (sequence_parallel == SequenceParallel::kOff) return tokens;
  BOOK_CHECK(tokens % ranks == 0, "sequence parallelism splits the "
                                      << tokens << " tokens of a micro-batch over " << ranks
                                      << " tensor-parallel ranks unevenly; use a batch "
                                         "× sequence length divisible by "
                                      << ranks);
  return tokens / ranks;
}

template <typename T>
TensorParallelSeam<T>::TensorParallelSeam(const train::Config& config, int max_batch,
                                          TensorParallelComm<T>* comm,
                                          SequenceParallel sequence_parallel,
                                          MemoryTracker* tracker)
    : sequence_parallel_(sequence_parallel),
      comm_(comm != nullptr ? comm : &local_),
      tracker_(tracker) {
  BOOK_CHECK(max_batch >= 1, "TensorParallelSeam: max_batch must be >= 1, got " << max_batch);
  const std::size_t n = static_cast<std::size_t>(max_batch) * config.context, c = config.d_model;
  const std::size_t t = static_cast<std::size_t>(comm_->size());
  whole_ = TrackedBuffer<T>(on() ? n * c : 0, kScratch, tracker);
  partial_ = TrackedBuffer<T>(n * c, kScratch, tracker);
  dy_whole_ = TrackedBuffer<T>(on() ? n * c : 0, kScratch, tracker);
  d_shard_ = TrackedBuffer<T>(on() ? held_room(n) * c : 0, kScratch, tracker);
  cross_entropy_scratch_ = TrackedBuffer<T>(n * (t + 3), kScratch, tracker);
}

template <typename T>
int TensorParallelSeam<T>::held_rows(int rows) const {
  return held_tokens(rows, comm_->size(), sequence_parallel_);
}

template <typename T>
std::size_t TensorParallelSeam<T>::held_room(std::size_t rows) const {
  const std::size_t t = static_cast<std::size_t>(comm_->size());
  return on() ? (rows + t - 1) / t : rows;
}

//! [seam_regions]
template <typename T>
const T* TensorParallelSeam<T>::norm_forward(const T* x, const T* gain, const T* bias, int rows,
                                             int channels, T* out, T* mean, T* rstd) {
  if (on()) {  // this rank's tokens, then every rank's, gathered
    sequence_parallel_norm_forward(x, gain, bias, held_rows(rows), channels, out, mean, rstd,
                                   whole_.data(), *comm_);
    return whole_.data();
  }
  train::layernorm_forward(x, gain, bias, rows, channels, out, mean, rstd);
  f_forward(std::span<const T>(out, static_cast<std::size_t>(rows) * channels), *comm_);
  return out;
}

template <typename T>
const T* TensorParallelSeam<T>::whole_rows(const T* held, int rows, int channels) {
  if (!on()) return held;
  // Only this rank's tokens were kept (as in Megatron-LM): gather them once more.
  gather_forward(std::span<const T>(held, static_cast<std::size_t>(held_rows(rows)) * channels),
                 std::span<T>(whole_.data(), static_cast<std::size_t>(rows) * channels), *comm_);
  return whole_.data();
}

template <typename T>
void TensorParallelSeam<T>::complete_input_gradient(T* d_whole, int rows, int channels) {
  if (!on()) f_backward(std::span<T>(d_whole, static_cast<std::size_t>(rows) * channels), *comm_);
}

template <typename T>
void TensorParallelSeam<T>::norm_backward(const T* d_whole, const T* x, const T* gain,
                                          const T* mean, const T* rstd, int rows, int channels,
                                          T* dx, T* dgain, T* dbias) {
  if (on())
    sequence_parallel_norm_backward(d_whole, x, gain, mean, rstd, held_rows(rows), channels,
                                    d_shard_.data(), dx, dgain, dbias, *comm_);
  else
    train::layernorm_backward(d_whole, x, gain, mean, rstd, rows, channels, dx, dgain, dbias);
}

template <typename T>
void TensorParallelSeam<T>::column_forward(const train::ProjectionWeights<T>& p, const T* x,
                                           int rows, T* y) {
  column_parallel_linear_forward<T>(shard(p), x, rows, y);
}

template <typename T>
void TensorParallelSeam<T>::column_backward(const train::ProjectionWeights<T>& p,
                                            const train::ProjectionGrads<T>& g, const T* x,
                                            const T* dy, int rows, T* dx) {
  column_parallel_linear_backward<T>(shard(p), {g.w, g.bias}, x, dy, rows, dx, *comm_,
                                     sequence_parallel_);
}

template <typename T>
void TensorParallelSeam<T>::row_forward(const train::ProjectionWeights<T>& p, const T* x, int rows,
                                        T* y) {
  row_parallel_linear_forward<T>(shard(p), x, rows, partial_.data(), y, *comm_, sequence_parallel_);
}

template <typename T>
void TensorParallelSeam<T>::row_backward(const train::ProjectionWeights<T>& p,
                                         const train::ProjectionGrads<T>& g, const T* x,
                                         const T* dy, int rows, T* dx) {
  row_parallel_linear_backward<T>(shard(p), {g.w, g.bias}, x, dy, rows, dy_whole_.data(), dx,
                                  *comm_, sequence_parallel_);
}
//! [seam_regions]

template <typename T>
void TensorParallelSeam<T>::embedding_forward(const int* tokens, int batch, int seq_len,
                                              const T* wte, int vocab_begin, int vocab_rows,
                                              const T* wpe, int channels, T* out) {
  vocab_parallel_embedding_forward(tokens, batch, seq_len,
                                   VocabularyShard<T>{wte, vocab_begin, vocab_rows}, wpe, channels,
                                   partial_.data(), out, *comm_, sequence_parallel_);
}

template <typename T>
void TensorParallelSeam<T>::embedding_backward(const int* tokens, int batch, int seq_len,
                                               int vocab_begin, int vocab_rows, const T* d_out,
                                               int channels, T* dwte, T* dwpe) {
  vocab_parallel_embedding_backward(
      tokens, batch, seq_len, VocabularyShard<T>{nullptr, vocab_begin, vocab_rows}, d_out, channels,
      dy_whole_.data(), dwte, dwpe, *comm_, sequence_parallel_);
}

template <typename T>
T TensorParallelSeam<T>::cross_entropy_forward(const T* logits, const int* targets, int rows,
                                               int vocab_begin, int vocab_rows, T* probs) {
  return parallel_cross_entropy_forward(logits, targets, rows, vocab_rows, vocab_begin, probs,
                                        cross_entropy_scratch_.data(), *comm_);
}

template <typename T>
void TensorParallelSeam<T>::cross_entropy_backward(const T* probs, const int* targets, int rows,
                                                   int vocab_begin, int vocab_rows, T scale,
                                                   T* dlogits) {
  parallel_cross_entropy_backward(probs, targets, rows, vocab_rows, vocab_begin, scale, dlogits);
}

//! [finish_gradients]
template <typename T>
void TensorParallelSeam<T>::finish_gradients(const train::ParameterLayout& layout,
                                             std::span<T> grads) {
  if (!on()) return;
  std::vector<const train::TensorSlot*> sharded;
  std::size_t count = 0;
  for (const auto& slot : layout.slots())
    if (token_sharded(slot.name)) {
      sharded.push_back(&slot);
      count += slot.size();
    }
  if (token_sharded_grads_.size() != count)
    token_sharded_grads_ = TrackedBuffer<T>(count, kScratch, tracker_);
  // One all-reduce for all of them: pack, sum over the group, unpack.
  T* packed = token_sharded_grads_.data();
  for (const auto* slot : sharded)
    packed =
        std::copy(grads.data() + slot->offset, grads.data() + slot->offset + slot->size(), packed);
  comm_->all_reduce(token_sharded_grads_.data(), count);
  const T* from = token_sharded_grads_.data();
  for (const auto* slot : sharded) {
    std::copy(from, from + slot->size(), grads.data() + slot->offset);
    from += slot->size();
  }
}
//! [finish_gradients]

template <typename T>
std::size_t TensorParallelSeam<T>::bytes() const {
  return whole_.bytes() + partial_.bytes() + dy_whole_.bytes() + d_shard_.bytes() +
         cross_entropy_scratch_.bytes() + token_sharded_grads_.bytes();
}

template <typename T>
train::ModelOptions<T> tensor_parallel_options(train::ModelPart part, TensorParallelSeam<T>& seam,
                                               MemoryTracker* tracker) {
  train::ModelOptions<T> options;
  options.part = part;
  options.part.tensor_parallel.split_vocabulary = true;
  options.tensor_parallel = &seam;
  options.tracker = tracker;
  return options;
}

template class TensorParallelSeam<float>;
template class TensorParallelSeam<double>;
template train::ModelOptions<float> tensor_parallel_options<float>(train::ModelPart,
                                                                   TensorParallelSeam<float>&,
                                                                   MemoryTracker*);
template train::ModelOptions<double> tensor_parallel_options<double>(train::ModelPart,
                                                                     TensorParallelSeam<double>&,
                                                                     MemoryTracker*);

}  // namespace book::tp
