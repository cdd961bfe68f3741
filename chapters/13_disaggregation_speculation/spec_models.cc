// The models a speculative decoder serves: any chapter-4 model with its own cache, runner and
// block manager (make_stack), and the self-speculative draft cut from the target (self_draft).
#include <algorithm>

#include "chapters/10_paged_attention/kv_shape.h"
#include "chapters/13_disaggregation_speculation/spec_decoder.h"
#include "common/check.h"

namespace book::spec {

ModelStack make_stack(std::unique_ptr<train::Model<float>> model, int num_blocks, int block_size,
                      int max_rows) {
  BOOK_CHECK(model != nullptr, "make_stack: no model");
  ModelStack stack;
  stack.cache =
      std::make_unique<kv::PagedKvCache>(kv::kv_shape_of(model->config()), num_blocks, block_size);
  stack.runner = std::make_unique<kv::ModelRunner>(*model, *stack.cache, max_rows);
  stack.blocks = std::make_unique<kv::BlockManager>(num_blocks, block_size);
  stack.model = std::move(model);
  return stack;
}

//! [self_draft]
std::unique_ptr<train::Model<float>> self_draft(const train::Model<float>& target, int layers) {
  train::Config config = target.config();
  BOOK_CHECK(layers >= 1 && layers < config.n_layer,
             "self_draft: the draft keeps 1 to " << config.n_layer - 1 << " of the target's "
                                                 << config.n_layer << " layers, not " << layers);
  BOOK_CHECK(target.layout().total() == static_cast<std::size_t>(config.parameter_count()),
             "self_draft: the target must be a whole model, not a part");
  config.n_layer = layers;
  auto draft = std::make_unique<train::Model<float>>(config, 1);
  // Every tensor of the shallower model has a namesake in the target ("wte", "h0.w_qkv", ...,
  // "lnf_gain"): copy it by name, so the draft is the target with its upper blocks skipped.
  for (const train::TensorSlot& slot : draft->layout().slots()) {
    const train::TensorSlot& source = target.layout().find(slot.name);
    BOOK_CHECK(source.size() == slot.size(), "self_draft: tensor " << slot.name << " differs");
    std::copy_n(target.params().data() + source.offset, slot.size(),
                draft->params().data() + slot.offset);
  }
  return draft;
}
//! [self_draft]
}  // namespace book::spec
