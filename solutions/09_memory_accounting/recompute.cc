// Reference body of exercise mem.recompute_segment (chapters/09_memory_accounting/recompute.h).
#include "chapters/09_memory_accounting/recompute.h"

#include "common/check.h"

namespace book::mem {

//! [recompute_segment]
void recompute_segment_backward(const train::Config& config,
                                const train::ModelTensors<float>& params,
                                const train::ModelTensors<float>& grads, int first, int last,
                                int batch, int seq_len, const float* x, const float* dy, float* dx,
                                RecomputeBuffers& buffers) {
  check_segment_in_model(params, grads, first, last);  // given: the segment is in the model
  const int k = last - first;
  BOOK_CHECK(first >= 0 && k >= 1 && k <= buffers.segment,
             "recompute_segment_backward: blocks [" << first << ", " << last << ") are not a "
                                                    << "segment of 1 to " << buffers.segment);
  const train::TensorParallelSlice whole;
  const auto input = [&](int j) { return j == 0 ? x : buffers.inputs[j].data(); };
  // Forward again, from the checkpoint: refill the segment's activations.
  for (int j = 0; j < k; ++j) {
    float* y = j + 1 < k ? buffers.inputs[j + 1].data() : buffers.grad_a.data();  // last: scratch
    train::block_forward(config, whole, params.blocks[first + j], batch, seq_len, input(j), y,
                         buffers.acts[j], buffers.workspace);
  }
  // Backward through the segment, top down, the residual gradient ping-ponging.
  const float* upstream = dy;
  for (int j = k - 1; j >= 0; --j) {
    float* out = j == 0 ? dx
                        : (upstream == buffers.grad_a.data() ? buffers.grad_b.data()
                                                             : buffers.grad_a.data());
    train::block_backward(config, whole, params.blocks[first + j], grads.blocks[first + j], batch,
                          seq_len, input(j), upstream, out, buffers.acts[j], buffers.workspace);
    upstream = out;
  }
}
//! [recompute_segment]

}  // namespace book::mem
