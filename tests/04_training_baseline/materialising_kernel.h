// Chapter 4's attention behind the attention-kernel seam (memory_seams.h), counting its calls:
// a kernel that must give exactly the numbers of a model without one. Used here and by chapter
// 9's recomputation tests.
#pragma once

#include <cstddef>

#include "chapters/04_training_baseline/layers.h"
#include "chapters/04_training_baseline/memory_seams.h"

namespace book::testing {

/// attention_forward and attention_backward (layers.h) as an AttentionKernel, saving the
/// B·h·T·T probabilities as chapter 4's blocks do.
class MaterialisingKernel final : public train::AttentionKernel<double> {
 public:
  /// B·h·T·T.
  std::size_t saved_elements(int batch, int seq_len, int heads) const override {
    return static_cast<std::size_t>(batch) * heads * seq_len * seq_len;
  }
  /// attention_forward; counts the call.
  void forward(const double* qkv, int batch, int seq_len, int heads, int head_size, double* saved,
               double* out) const override {
    ++forwards;
    train::attention_forward(qkv, batch, seq_len, heads, head_size, saved, out);
  }
  /// attention_backward; counts the call.
  void backward(const double* dout, const double* qkv, const double*, const double* saved,
                int batch, int seq_len, int heads, int head_size, double* dqkv) const override {
    ++backwards;
    train::attention_backward(dout, qkv, saved, batch, seq_len, heads, head_size, dqkv);
  }
  mutable int forwards = 0;   ///< forward calls so far
  mutable int backwards = 0;  ///< backward calls so far
};

}  // namespace book::testing
