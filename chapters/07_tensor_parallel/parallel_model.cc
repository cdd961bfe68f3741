// The tensor-parallel model's buffers, initialisation, activations and the gradient pieces; the
// passes are in parallel_model_passes.cc.
#include "chapters/07_tensor_parallel/parallel_model.h"

#include <algorithm>
#include <string>

#include "chapters/04_training_baseline/model.h"
#include "common/check.h"

namespace book::tp {
namespace {

// The part with the vocabulary split, as every rank of this model holds it.
train::ModelPart vocabulary_split(train::ModelPart part) {
  part.tensor_parallel.split_vocabulary = true;
  return part;
}

bool token_sharded(const std::string& name) {
  for (const char* suffix :
       {"ln1_gain", "ln1_bias", "ln2_gain", "ln2_bias", "b_out", "b_proj", "lnf_gain", "lnf_bias"})
    if (name.ends_with(suffix)) return true;
  return false;
}

}  // namespace

template <typename T>
ParallelActivations<T>::ParallelActivations(const ParallelModel<T>& model)
    : owner_(&model),
      first_layer_(model.part().first_layer),
      last_layer_(model.part().last_layer),
      max_batch_(model.max_batch()),
      context_(model.config().context) {
  const train::Config& config = model.config();
  const train::ModelPart& part = model.part();
  const train::TensorParallelSlice& slice = part.tensor_parallel;
  const SequenceParallel sp = model.sequence_parallel();
  MemoryTracker* tracker = model.tracker();
  constexpr auto kActs = MemoryCategory::kActivations;
  const std::size_t n = static_cast<std::size_t>(max_batch_) * context_, c = config.d_model;
  const std::size_t held = sp == SequenceParallel::kOn ? (n + slice.size - 1) / slice.size : n;
  const std::size_t vocab = slice.vocab_rows(config);
  if (part.has_embedding()) tokens_ = TrackedBuffer<int>(n, kActs, tracker);
  for (int l = first_layer_; l <= last_layer_; ++l) {
    stream_.emplace_back(held * c, kActs, tracker);
    stream_grad_.emplace_back(held * c, kActs, tracker);
  }
  for (int l = first_layer_; l < last_layer_; ++l)
    blocks_.emplace_back(config, slice, sp, max_batch_, context_, tracker);
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
void ParallelActivations<T>::set_shape(int batch, int seq_len) {
  BOOK_CHECK(batch >= 1 && batch <= max_batch_, "ParallelModel: batch "
                                                    << batch << " is outside 1.." << max_batch_
                                                    << " (the max_batch it was built for)");
  BOOK_CHECK(seq_len >= 1 && seq_len <= context_, "ParallelModel: seq_len "
                                                      << seq_len << " is outside 1.." << context_
                                                      << " (the context)");
  held_ = held_tokens(batch * seq_len, owner_->part().tensor_parallel.size,
                      owner_->sequence_parallel());
  batch_ = batch;
  seq_len_ = seq_len;
  has_targets_ = false;
}

template <typename T>
std::size_t ParallelActivations<T>::index(int layer, const char* who) const {
  BOOK_CHECK(first_layer_ <= layer && layer <= last_layer_,
             who << ": layer boundary " << layer << " is outside this part's " << first_layer_
                 << ".." << last_layer_);
  return static_cast<std::size_t>(layer - first_layer_);
}

template <typename T>
T* ParallelActivations<T>::residual(int layer) {
  return stream_[index(layer, "residual")].data();
}

template <typename T>
T* ParallelActivations<T>::residual_grad(int layer) {
  return stream_grad_[index(layer, "residual_grad")].data();
}

template <typename T>
const T* ParallelActivations<T>::logits() const {
  BOOK_CHECK(logits_.size() > 0, "logits: this part (layers " << first_layer_ << ".."
                                                              << last_layer_ - 1
                                                              << ") has no LM head");
  return logits_.data();
}

template <typename T>
std::size_t ParallelActivations<T>::layer_bytes(int layer) const {
  BOOK_CHECK(first_layer_ <= layer && layer < last_layer_,
             "layer_bytes: layer " << layer << " is outside this part's " << first_layer_ << ".."
                                   << last_layer_ - 1);
  const std::size_t i = static_cast<std::size_t>(layer - first_layer_);
  return blocks_[i].bytes() + stream_[i].bytes();
}

template <typename T>
std::size_t ParallelActivations<T>::bytes() const {
  std::size_t total = tokens_.bytes() + targets_.bytes();
  for (const auto& b : stream_) total += b.bytes();
  for (const auto& b : stream_grad_) total += b.bytes();
  for (const auto& b : blocks_) total += b.bytes();
  for (const auto* b : {&lnf_, &lnf_mean_, &lnf_rstd_, &logits_, &probs_}) total += b->bytes();
  return total;
}

template <typename T>
ParallelModel<T>::ParallelModel(const train::Config& config, int max_batch,
                                const ParallelModelOptions<T>& options)
    : config_(config),
      max_batch_(max_batch),
      sequence_parallel_(options.sequence_parallel),
      layout_(config, vocabulary_split(options.part)),
      comm_(options.comm != nullptr ? options.comm : &local_),
      tracker_(options.tracker) {
  BOOK_CHECK(max_batch >= 1, "ParallelModel: max_batch must be >= 1, got " << max_batch);
  const train::TensorParallelSlice& s = layout_.part().tensor_parallel;
  BOOK_CHECK(options.comm != nullptr || s.size == 1,
             "ParallelModel: tensor-parallel rank "
                 << s.rank << " of " << s.size
                 << " needs a group in ParallelModelOptions::comm "
                    "(a TensorParallelGroup over its Communicator)");
  BOOK_CHECK(comm_->size() == s.size && comm_->rank() == s.rank,
             "ParallelModel: the group is rank " << comm_->rank() << " of " << comm_->size()
                                                 << " but the part's slice is rank " << s.rank
                                                 << " of " << s.size);
  params_ = TrackedBuffer<T>(layout_.total(), MemoryCategory::kParameters, tracker_);
  grads_ = TrackedBuffer<T>(layout_.total(), T(0), MemoryCategory::kGradients, tracker_);
  p_ = train::bind(layout_, params_.data());
  g_ = train::bind(layout_, grads_.data());
  workspace_ =
      ParallelWorkspace<T>(config, s, sequence_parallel_, max_batch, config.context, tracker_);
  if (layout_.part().has_head(config)) {
    const std::size_t n = static_cast<std::size_t>(max_batch) * config.context;
    dlogits_ = TrackedBuffer<T>(n * s.vocab_rows(config), MemoryCategory::kOther, tracker_);
    cross_entropy_scratch_ = TrackedBuffer<T>(n * (s.size + 3), MemoryCategory::kOther, tracker_);
  }
  std::size_t sharded = 0;
  for (const auto& slot : layout_.slots())
    if (token_sharded(slot.name)) {
      token_sharded_.push_back(&slot);
      sharded += slot.size();
    }
  if (sequence_parallel_ == SequenceParallel::kOn)
    token_sharded_grads_ = TrackedBuffer<T>(sharded, MemoryCategory::kOther, tracker_);
}

template <typename T>
ParallelModel<T>::~ParallelModel() = default;

template <typename T>
void ParallelModel<T>::init(std::uint64_t seed) {
  train::init_parameters(layout_, seed, params_.span());
}

template <typename T>
void ParallelModel<T>::zero_grad() {
  std::fill(grads_.begin(), grads_.end(), T(0));
}

template <typename T>
std::size_t ParallelModel<T>::workspace_bytes() const {
  return workspace_.bytes() + dlogits_.bytes() + cross_entropy_scratch_.bytes() +
         token_sharded_grads_.bytes();
}

//! [finish_gradients]
template <typename T>
void ParallelModel<T>::finish_gradients() {
  if (sequence_parallel_ == SequenceParallel::kOff) return;
  // One all-reduce for all of them: pack, sum over the group, unpack.
  T* packed = token_sharded_grads_.data();
  for (const auto* slot : token_sharded_)
    packed = std::copy(grads_.data() + slot->offset, grads_.data() + slot->offset + slot->size(),
                       packed);
  comm_->all_reduce(token_sharded_grads_.data(), token_sharded_grads_.size());
  const T* from = token_sharded_grads_.data();
  for (const auto* slot : token_sharded_) {
    std::copy(from, from + slot->size(), grads_.data() + slot->offset);
    from += slot->size();
  }
}
//! [finish_gradients]

template <typename T>
double ParallelModel<T>::gradient_sum_of_squares() const {
  double total = 0;
  for (const auto& slot : layout_.slots()) {
    if (slot.split == train::TensorParallelSplit::kReplicated && comm_->rank() != 0) continue;
    for (std::size_t i = slot.offset; i < slot.offset + slot.size(); ++i)
      total += static_cast<double>(grads_[i]) * static_cast<double>(grads_[i]);
  }
  return total;
}

template <typename T>
void ParallelModel<T>::check(const ParallelActivations<T>& acts, const char* who,
                             bool needs_shape) const {
  BOOK_CHECK(acts.owner_ == this,
             who << ": these activations were made for another ParallelModel; make one per model "
                    "(ParallelActivations<T>(model))");
  BOOK_CHECK(!needs_shape || acts.batch() > 0,
             who << ": the activations have no micro-batch yet (run embed_forward, or set_shape "
                    "and fill residual(first layer))");
}

template <typename T>
T forward_backward(ParallelModel<T>& model, const train::Batch& batch, T loss_scale,
                   ParallelActivations<T>& acts) {
  const T loss =
      model.forward(acts, batch.tokens.data(), batch.targets.data(), batch.batch, batch.seq_len);
  model.backward(acts, loss_scale);
  return loss;
}

template class ParallelActivations<float>;
template class ParallelActivations<double>;
template class ParallelModel<float>;
template class ParallelModel<double>;
template float forward_backward<float>(ParallelModel<float>&, const train::Batch&, float,
                                       ParallelActivations<float>&);
template double forward_backward<double>(ParallelModel<double>&, const train::Batch&, double,
                                         ParallelActivations<double>&);

}  // namespace book::tp
