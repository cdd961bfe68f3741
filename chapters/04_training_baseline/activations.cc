#include "chapters/04_training_baseline/activations.h"

#include "chapters/04_training_baseline/model.h"
#include "common/check.h"

namespace book::train {
namespace {

// This chapter's activation policy: every block keeps all its activations in a BlockActivations
// of its own, the attention core's saved numbers in its att.
template <typename T>
class KeepEverything final : public BlockMemory<T> {
 public:
  explicit KeepEverything(const Model<T>& model) : first_(model.part().first_layer) {
    for (int l = model.part().first_layer; l < model.part().last_layer; ++l)
      blocks_.push_back(model.block_activations());
  }
  void forward(Model<T>& model, Activations<T>& acts, int layer) override {
    BlockActivations<T>& block = blocks_[layer - first_];
    model.forward_block(acts, layer, block, block.att.data());
  }
  void backward(Model<T>& model, Activations<T>& acts, int layer) override {
    model.backward_block(acts, layer, blocks_[layer - first_]);
  }
  BlockActivations<T>* kept(int layer) override { return &blocks_[layer - first_]; }
  std::size_t bytes() const override {
    std::size_t total = 0;
    for (const auto& b : blocks_) total += b.bytes();
    return total;
  }

 private:
  int first_;
  std::vector<BlockActivations<T>> blocks_;
};

}  // namespace

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
  if (model.activation_policy()) {
    blocks_ = model.activation_policy()(model);
    BOOK_CHECK(blocks_ != nullptr,
               "Activations: the model's activation policy made no "
               "BlockMemory (ModelOptions::activation_policy returned null)");
  } else {
    blocks_ = std::make_unique<KeepEverything<T>>(model);
  }
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
  BOOK_CHECK(first_layer_ <= layer && layer < last_layer_,
             "block: layer " << layer << " is outside this part's blocks " << first_layer_ << ".."
                             << last_layer_ - 1);
  BlockActivations<T>* kept = blocks_->kept(layer);
  BOOK_CHECK(kept != nullptr,
             "block: the model's activation policy does not keep block "
                 << layer << "'s activations whole; build the model without one "
                 << "(ModelOptions::activation_policy) to run a block's backward in pieces");
  return *kept;
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
  const BlockActivations<T>* kept = blocks_->kept(layer);
  BOOK_CHECK(kept != nullptr, "layer_bytes: the model's activation policy does not keep block "
                                  << layer << "'s activations whole");
  return kept->bytes() + stream_[static_cast<std::size_t>(layer - first_layer_)].bytes();
}

template <typename T>
std::size_t Activations<T>::bytes() const {
  std::size_t total = tokens_.bytes() + targets_.bytes();
  for (const auto& b : stream_) total += b.bytes();
  for (const auto& b : stream_grad_) total += b.bytes();
  total += blocks_->bytes();
  for (const auto* b : {&lnf_, &lnf_mean_, &lnf_rstd_, &logits_, &probs_}) total += b->bytes();
  return total;
}

template class Activations<float>;
template class Activations<double>;

}  // namespace book::train
