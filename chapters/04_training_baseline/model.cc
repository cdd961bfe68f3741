// The model part's buffers, initialisation and the whole-model compositions; the passes
// themselves are in model_passes.cc.
#include "chapters/04_training_baseline/model.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "chapters/04_training_baseline/parameter_copy.h"
#include "common/check.h"
#include "common/rng.h"

namespace book::train {

template <typename T>
Model<T>::Model(const Config& config, int max_batch, const ModelOptions<T>& options)
    : config_(config),
      max_batch_(max_batch),
      layout_(config, options.part),
      tp_(options.tensor_parallel != nullptr ? options.tensor_parallel : &one_device<T>()),
      tracker_(options.tracker) {
  activation_policy_ = options.activation_policy;
  attention_ = options.attention;
  BOOK_CHECK(max_batch >= 1, "Model: max_batch must be >= 1, got " << max_batch);
  const TensorParallelSlice& slice = layout_.part().tensor_parallel;
  if (slice.size > 1)
    BOOK_CHECK(options.tensor_parallel != nullptr,
               "Model: tensor-parallel rank "
                   << slice.rank << " of " << slice.size
                   << " needs its seam in ModelOptions::tensor_parallel");
  BOOK_CHECK(tp_->size() == slice.size && tp_->rank() == slice.rank,
             "Model: the seam is rank " << tp_->rank() << " of " << tp_->size()
                                        << " but the part's slice is rank " << slice.rank << " of "
                                        << slice.size);
  if (options.own_parameters) {
    params_ = TrackedBuffer<T>(layout_.total(), options.parameter_category, tracker_);
    grads_ = TrackedBuffer<T>(layout_.total(), T(0), options.gradient_category, tracker_);
    p_ = bind(layout_, params_.data());
    g_ = bind(layout_, grads_.data());
  } else {  // the caller points the tensors at its buffers (bind_range)
    p_ = g_ = unbound<T>(layout_);
  }
  workspace_ = BlockWorkspace<T>(config, slice, max_batch, config.context, tracker_);
  if (layout_.part().has_head(config)) {
    const std::size_t n = static_cast<std::size_t>(max_batch) * config.context;
    dlogits_ = TrackedBuffer<T>(n * slice.vocab_rows(config), MemoryCategory::kOther, tracker_);
    dlnf_ = TrackedBuffer<T>(n * config.d_model, MemoryCategory::kOther, tracker_);
  }
}

template <typename T>
Model<T>::~Model() = default;

template <typename T>
void init_parameters(const ParameterLayout& layout, std::uint64_t seed, std::span<T> params) {
  BOOK_CHECK(params.size() == layout.total(), "init_parameters: a buffer of "
                                                  << params.size() << " elements for a layout of "
                                                  << layout.total());
  // The whole model's values are drawn slot by slot in the whole model's order, so every part
  // (stage, tensor-parallel slice) keeps exactly its share of a one-device initialisation.
  const Config& config = layout.config();
  Rng rng(seed);
  const double residual_std = 0.02 / std::sqrt(2.0 * config.n_layer);
  const ParameterLayout whole(config);
  std::vector<T> values;
  for (const auto& slot : whole.slots()) {
    values.resize(slot.size());
    const bool is_gain = slot.name.find("gain") != std::string::npos;
    const bool is_projection = slot.name.ends_with("w_out") || slot.name.ends_with("w_proj");
    for (std::size_t i = 0; i < slot.size(); ++i) {
      if (is_gain)
        values[i] = T(1);
      else if (!slot.decay)
        values[i] = T(0);  // biases
      else
        values[i] = static_cast<T>(rng.normal() * (is_projection ? residual_std : 0.02));
    }
    if (!layout.contains(slot.name)) continue;
    const TensorSlot& mine = layout.find(slot.name);
    for (std::size_t r = 0; r < mine.rows; ++r)
      for (std::size_t c = 0; c < mine.cols; ++c)
        params[mine.offset + r * mine.cols + c] =
            values[whole_index(slot, mine, layout.part().tensor_parallel, r, c)];
  }
}

template void init_parameters<float>(const ParameterLayout&, std::uint64_t, std::span<float>);
template void init_parameters<double>(const ParameterLayout&, std::uint64_t, std::span<double>);

template <typename T>
void Model<T>::init(std::uint64_t seed) {
  init_parameters(layout_, seed, params_.span());
}

template <typename T>
void Model<T>::zero_grad() {
  std::fill(grads_.begin(), grads_.end(), T(0));
}

template <typename T>
void Model<T>::finish_gradients() {
  tp_->finish_gradients(layout_, grads_.span());
}

template <typename T>
double Model<T>::gradient_sum_of_squares() const {
  double total = 0;
  const bool counts_replicated = part().tensor_parallel.rank == 0;
  for (const auto& slot : layout_.slots()) {
    if (slot.split == TensorParallelSplit::kReplicated && !counts_replicated) continue;
    for (std::size_t i = slot.offset; i < slot.offset + slot.size(); ++i)
      total += static_cast<double>(grads_[i]) * static_cast<double>(grads_[i]);
  }
  return total;
}

template <typename T>
void Model<T>::bind_range(std::size_t begin, std::size_t end, T* params, T* grads) {
  rebind(layout_, begin, end, params, p_);
  rebind(layout_, begin, end, grads, g_);
}

template <typename T>
std::span<T> Model<T>::wte_of(TrackedBuffer<T>& buffer) {
  BOOK_CHECK(layout_.contains("wte"), "tied_embedding: this part (layers "
                                          << part().first_layer << ".." << part().last_layer - 1
                                          << ") holds neither the embedding nor the head");
  const TensorSlot& wte = layout_.find("wte");
  return buffer.span().subspan(wte.offset, wte.size());
}

template <typename T>
std::span<T> Model<T>::tied_embedding() {
  return wte_of(params_);
}

template <typename T>
std::span<T> Model<T>::tied_embedding_grad() {
  return wte_of(grads_);
}

template <typename T>
std::size_t Model<T>::workspace_bytes() const {
  return workspace_.bytes() + dlogits_.bytes() + dlnf_.bytes();
}

template <typename T>
std::size_t Model<T>::attention_saved_elements() const {
  const int heads = part().tensor_parallel.heads(config_);
  if (attention_ != nullptr) return attention_->saved_elements(max_batch_, config_.context, heads);
  return static_cast<std::size_t>(max_batch_) * config_.context * heads * config_.context;
}

template <typename T>
BlockActivations<T> Model<T>::block_activations(bool with_saved) const {
  // Chapter 4's attention: the probabilities in their place among the buffers; another kernel's
  // saved numbers after them, in the size it asks for.
  BlockActivations<T> block(config_, part().tensor_parallel, max_batch_, config_.context, tracker_,
                            /*attention_probabilities=*/with_saved && attention_ == nullptr, tp_);
  if (with_saved && attention_ != nullptr)
    block.att =
        TrackedBuffer<T>(attention_saved_elements(), MemoryCategory::kActivations, tracker_);
  return block;
}

template <typename T>
Activations<T>& Model<T>::activations() {
  if (!own_activations_) own_activations_ = std::make_unique<Activations<T>>(*this);
  return *own_activations_;
}

//! [model_forward]
template <typename T>
T Model<T>::forward(Activations<T>& acts, const int* tokens, const int* targets, int batch,
                    int seq_len) {
  embed_forward(acts, tokens, batch, seq_len);
  layers_forward(acts, part().first_layer, part().last_layer);
  return head_forward(acts, targets);
}
//! [model_forward]

template <typename T>
void Model<T>::backward(Activations<T>& acts, T loss_scale, const GradientReadyHook& ready) {
  head_backward(acts, loss_scale, ready);
  layers_backward(acts, part().last_layer, part().first_layer, ready);
  embed_backward(acts, ready);
}

template <typename T>
T Model<T>::forward(const int* tokens, const int* targets, int batch, int seq_len) {
  return forward(activations(), tokens, targets, batch, seq_len);
}

template <typename T>
void Model<T>::backward(T loss_scale, const GradientReadyHook& ready) {
  backward(activations(), loss_scale, ready);
}

template <typename T>
const T* Model<T>::logits() const {
  BOOK_CHECK(own_activations_ != nullptr, "logits: no forward() has run on this model yet");
  return own_activations_->logits();
}

template <typename T>
void Model<T>::check(const Activations<T>& acts, const char* who, bool needs_shape) const {
  BOOK_CHECK(acts.owner_ == this,
             who << ": these activations were made for another Model; make one per model "
                    "(Activations<T>(model))");
  BOOK_CHECK(!needs_shape || acts.batch() > 0,
             who << ": the activations have no micro-batch yet (run embed_forward, or "
                    "set_shape and fill residual(first layer))");
}

template class Model<float>;
template class Model<double>;

}  // namespace book::train
