#include "chapters/04_training_baseline/activations.h"

#include "chapters/04_training_baseline/model.h"
#include "common/check.h"

namespace book::train {

template <typename T>
Activations<T>::Activations(const Model<T>& model)
    : owner_(&model),
      first_layer_(model.part().first_layer),
      last_layer_(model.part().last_layer),
      max_batch_(model.max_batch()),
      context_(model.config().context) {
  const Config& config = model.config();
  const ModelPart& part = model.part();
  MemoryTracker* tracker = model.tracker();
  constexpr auto kActs = MemoryCategory::kActivations;
  const std::size_t n = static_cast<std::size_t>(max_batch_) * context_, c = config.d_model;
  const TensorParallelism<T>& tp = model.tensor_parallelism();
  const std::size_t held = tp.held_room(n);  // the rows held between the regions
  const std::size_t vocab = part.tensor_parallel.vocab_rows(config);
  if (part.has_embedding()) tokens_ = TrackedBuffer<int>(n, kActs, tracker);
  for (int l = first_layer_; l <= last_layer_; ++l) {
    stream_.emplace_back(held * c, kActs, tracker);
    stream_grad_.emplace_back(held * c, kActs, tracker);
  }
  if (model.recompute() != Recomputation::kNone || model.attention_kernel() != nullptr)
    make_remedy_blocks(model);
  else
    for (int l = first_layer_; l < last_layer_; ++l)
      blocks_.emplace_back(config, part.tensor_parallel, max_batch_, context_, tracker,
                           /*attention_probabilities=*/true, &tp);
  if (part.has_head(config)) {
    targets_ = TrackedBuffer<int>(n, kActs, tracker);
    lnf_ = TrackedBuffer<T>(held * c, kActs, tracker);
    lnf_mean_ = TrackedBuffer<T>(held, kActs, tracker);
    lnf_rstd_ = TrackedBuffer<T>(held, kActs, tracker);
    logits_ = TrackedBuffer<T>(n * vocab, kActs, tracker);
    probs_ = TrackedBuffer<T>(n * vocab, kActs, tracker);
  }
}

template <typename T>
void Activations<T>::set_shape(int batch, int seq_len) {
  BOOK_CHECK(batch >= 1 && batch <= max_batch_, "Model: batch "
                                                    << batch << " is outside 1.." << max_batch_
                                                    << " (the max_batch it was built for)");
  BOOK_CHECK(seq_len >= 1 && seq_len <= context_,
             "Model: seq_len " << seq_len << " is outside 1.." << context_ << " (the context)");
  held_rows_ = owner_->tensor_parallelism().held_rows(batch * seq_len);
  batch_ = batch;
  seq_len_ = seq_len;
  has_targets_ = false;
}

template <typename T>
std::size_t Activations<T>::index(int layer, const char* who) const {
  BOOK_CHECK(first_layer_ <= layer && layer <= last_layer_,
             who << ": layer boundary " << layer << " is outside this part's " << first_layer_
                 << ".." << last_layer_);
  return static_cast<std::size_t>(layer - first_layer_);
}

template <typename T>
T* Activations<T>::residual(int layer) {
  return stream_[index(layer, "residual")].data();
}

template <typename T>
BlockActivations<T>& Activations<T>::block(int layer) {
  BOOK_CHECK(layer < last_layer_, "block: layer " << layer << " is outside this part's blocks "
                                                  << first_layer_ << ".." << last_layer_ - 1);
  BOOK_CHECK(blocks_.size() == static_cast<std::size_t>(last_layer_ - first_layer_),
             "block: with full recomputation the activations keep no block's buffers; build the "
             "model with Recomputation::kNone to run a block's backward in pieces");
  return blocks_[index(layer, "block")];
}

template <typename T>
T* Activations<T>::residual_grad(int layer) {
  return stream_grad_[index(layer, "residual_grad")].data();
}

template <typename T>
const T* Activations<T>::logits() const {
  BOOK_CHECK(logits_.size() > 0, "logits: this part (layers " << first_layer_ << ".."
                                                              << last_layer_ - 1
                                                              << ") has no LM head");
  return logits_.data();
}

template <typename T>
std::size_t Activations<T>::layer_bytes(int layer) const {
  BOOK_CHECK(first_layer_ <= layer && layer < last_layer_,
             "layer_bytes: layer " << layer << " is outside this part's " << first_layer_ << ".."
                                   << last_layer_ - 1);
  BOOK_CHECK(blocks_.size() == static_cast<std::size_t>(last_layer_ - first_layer_),
             "layer_bytes: with full recomputation the layers share one block's buffers");
  const std::size_t i = static_cast<std::size_t>(layer - first_layer_);
  return blocks_[i].bytes() + stream_[i].bytes();
}

template <typename T>
std::size_t Activations<T>::bytes() const {
  std::size_t total = tokens_.bytes() + targets_.bytes();
  for (const auto& b : stream_) total += b.bytes();
  for (const auto& b : stream_grad_) total += b.bytes();
  for (const auto& b : blocks_) total += b.bytes();
  for (const auto* b : {&lnf_, &lnf_mean_, &lnf_rstd_, &logits_, &probs_}) total += b->bytes();
  total += shared_saved_.bytes();
  return total;
}

template class Activations<float>;
template class Activations<double>;

}  // namespace book::train
