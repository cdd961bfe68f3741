// Selective and full recomputation as BlockMemories (recomputation_policy.h).
#include "chapters/09_memory_accounting/recomputation_policy.h"

#include <memory>
#include <utility>
#include <vector>

#include "chapters/04_training_baseline/model.h"

namespace book::mem {
namespace {

using train::Activations;
using train::BlockActivations;
using train::Model;

//! [selective]
// Every block keeps its activations but the attention core's saved numbers: one block's worth of
// those, shared, lent to each block for its backward.
template <typename T>
class Selective final : public train::BlockMemory<T> {
 public:
  explicit Selective(const Model<T>& model) : first_(model.part().first_layer) {
    for (int l = model.part().first_layer; l < model.part().last_layer; ++l)
      blocks_.push_back(model.block_activations(/*with_saved=*/false));
    shared_ = TrackedBuffer<T>(model.attention_saved_elements(), MemoryCategory::kActivations,
                               model.tracker());
  }
  void forward(Model<T>& model, Activations<T>& acts, int layer) override {
    model.forward_block(acts, layer, blocks_[layer - first_], shared_.data());
  }
  void backward(Model<T>& model, Activations<T>& acts, int layer) override {
    BlockActivations<T>& block = blocks_[layer - first_];
    model.rerun_attention(acts, block, shared_.data());  // from the q, k, v the block kept
    std::swap(block.att, shared_);                       // lend it to this block (no allocation)
    model.backward_block(acts, layer, block);
    std::swap(block.att, shared_);
  }
  BlockActivations<T>* kept(int) override { return nullptr; }
  std::size_t bytes() const override {
    std::size_t total = shared_.bytes();
    for (const auto& b : blocks_) total += b.bytes();
    return total;
  }

 private:
  int first_;
  std::vector<BlockActivations<T>> blocks_;
  TrackedBuffer<T> shared_;
};
//! [selective]

//! [full]
// One block's activations, refilled by each block's forward and again just before its backward.
template <typename T>
class Full final : public train::BlockMemory<T> {
 public:
  explicit Full(const Model<T>& model) : block_(model.block_activations()) {}
  void forward(Model<T>& model, Activations<T>& acts, int layer) override {
    model.forward_block(acts, layer, block_, block_.att.data());
  }
  void backward(Model<T>& model, Activations<T>& acts, int layer) override {
    model.forward_block(acts, layer, block_, block_.att.data(), /*rerun=*/true);
    model.backward_block(acts, layer, block_);
  }
  BlockActivations<T>* kept(int) override { return nullptr; }
  std::size_t bytes() const override { return block_.bytes(); }

 private:
  BlockActivations<T> block_;
};
//! [full]

}  // namespace

template <typename T>
train::ActivationPolicy<T> recomputation_policy(Recomputation recomputation) {
  switch (recomputation) {
    case Recomputation::kNone:
      return {};
    case Recomputation::kSelective:
      return [](const Model<T>& model) { return std::make_unique<Selective<T>>(model); };
    case Recomputation::kFull:
      return [](const Model<T>& model) { return std::make_unique<Full<T>>(model); };
  }
  return {};
}

template train::ActivationPolicy<float> recomputation_policy<float>(Recomputation);
template train::ActivationPolicy<double> recomputation_policy<double>(Recomputation);

}  // namespace book::mem
