// Recomputation buffers and the checkpointed backward of a whole model.
#include "chapters/09_memory_accounting/recompute.h"

#include <algorithm>

#include "common/check.h"

namespace book::mem {

RecomputeBuffers::RecomputeBuffers(const train::Config& config, int segment_blocks, int max_batch,
                                   MemoryTracker* tracker)
    : segment(segment_blocks) {
  BOOK_CHECK(segment_blocks >= 1 && segment_blocks <= config.n_layer,
             "recompute: a segment must hold 1 to " << config.n_layer << " blocks, got "
                                                    << segment_blocks);
  const train::TensorParallelSlice whole;
  const std::size_t rows = static_cast<std::size_t>(max_batch) * config.context;
  for (int j = 0; j < segment_blocks; ++j) {
    acts.emplace_back(config, whole, max_batch, config.context, tracker);
    // inputs[0] stays empty: block `first` reads the checkpoint itself.
    inputs.emplace_back(j == 0 ? 0 : rows * config.d_model, MemoryCategory::kActivations, tracker);
  }
  grad_a = TrackedBuffer<float>(rows * config.d_model, MemoryCategory::kOther, tracker);
  grad_b = TrackedBuffer<float>(rows * config.d_model, MemoryCategory::kOther, tracker);
  workspace = train::BlockWorkspace<float>(config, whole, max_batch, config.context, tracker);
}

void checkpointed_backward(train::Model<float>& model, RecomputeBuffers& buffers) {
  const train::Config& config = model.config();
  BOOK_CHECK(model.part().first_layer == 0 && model.part().last_layer == config.n_layer &&
                 model.part().tensor_parallel.size == 1,
             "checkpointed_backward: needs the whole model on one device");
  train::Activations<float>& acts = model.activations();
  const train::ModelTensors<float> params = train::bind(model.layout(), model.params().data());
  const train::ModelTensors<float> grads = train::bind(model.layout(), model.grads().data());
  model.head_backward(acts, 1.0f);
  for (int last = config.n_layer; last > 0; last -= buffers.segment) {
    const int first = std::max(0, last - buffers.segment);
    recompute_segment_backward(config, params, grads, first, last, acts.batch(), acts.seq_len(),
                               acts.residual(first), acts.residual_grad(last),
                               acts.residual_grad(first), buffers);
  }
  model.embed_backward(acts);
}

}  // namespace book::mem
