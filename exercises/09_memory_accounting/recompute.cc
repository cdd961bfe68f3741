// Exercise mem.recompute_segment — write recompute_segment_backward (declared in
// chapters/09_memory_accounting/recompute.h): refuse a segment of 0 or more than buffers.segment
// blocks; run train::block_forward for blocks first..last-1 in order from the checkpoint `x`
// (block first + j reads x for j = 0, else buffers.inputs[j], and writes its output into
// buffers.inputs[j + 1], the last one into a scratch buffer), filling buffers.acts[j]; then run
// train::block_backward from block last - 1 down to first, starting from `dy`, passing the
// residual gradient between grad_a and grad_b, and writing block first's into `dx`.
// Graded by tests/09_memory_accounting/recompute_test.cc:
//   bazel test --config=exercises //tests/09_memory_accounting:recompute_test
#include "chapters/09_memory_accounting/recompute.h"

#include "common/check.h"

namespace book::mem {

void recompute_segment_backward(const train::Config& config,
                                const train::ModelTensors<float>& params,
                                const train::ModelTensors<float>& grads, int first, int last,
                                int batch, int seq_len, const float* x, const float* dy, float* dx,
                                RecomputeBuffers& buffers) {
  check_segment_in_model(params, grads, first, last);  // given: the segment is in the model
  (void)config, (void)params, (void)grads, (void)first, (void)last, (void)batch, (void)seq_len;
  (void)x, (void)dy, (void)dx, (void)buffers;
  BOOK_NOT_IMPLEMENTED("mem.recompute_segment", "exercises/09_memory_accounting/recompute.cc",
                       "chapters/09_memory_accounting/README.md, section Recomputation");
}

}  // namespace book::mem
