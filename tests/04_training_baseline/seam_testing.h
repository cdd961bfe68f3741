// What chapter 4's seam tests and chapter 9's recomputation tests share: chapter 4's attention
// behind the attention-kernel seam (memory_seams.h), counting its calls — a kernel that must give
// exactly the numbers of a model without one — and one tiny forward/backward whose loss, gradients
// and activation bytes a seam must leave as the plain model has them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "chapters/04_training_baseline/layers.h"
#include "chapters/04_training_baseline/memory_seams.h"
#include "chapters/04_training_baseline/model.h"
#include "chapters/04_training_baseline/step.h"
#include "common/rng.h"

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

/// 3 layers, 2 heads, width 8, an 11-token vocabulary, context 7: small enough to compare every
/// gradient bit.
inline train::Config tiny_seam_config() {
  train::Config c;
  c.n_layer = 3;
  c.n_head = 2;
  c.d_model = 8;
  c.vocab_size = 11;
  c.context = 7;
  return c;
}

/// `batch` sequences of `seq_len` random tokens with random targets (some −1: ignored).
inline train::Batch random_seam_batch(int batch, int seq_len, std::uint64_t seed) {
  train::Batch b;
  b.batch = batch;
  b.seq_len = seq_len;
  Rng rng(seed);
  for (int i = 0; i < batch * seq_len; ++i) {
    b.tokens.push_back(static_cast<int>(rng.next_u64() % 11));
    b.targets.push_back(static_cast<int>(rng.next_u64() % 12) - 1);  // -1: ignored
  }
  return b;
}

/// One forward/backward's loss and gradients, and the activations' bytes.
struct SeamRun {
  double loss;                   ///< the micro-batch's loss
  std::vector<double> grads;     ///< every gradient, in the layout's order
  std::size_t activation_bytes;  ///< the activations' bytes (checked against the tracker)
};

/// The tiny model (seed 21, micro-batch 3) with `options`, one forward/backward on a fixed batch.
inline SeamRun run_tiny_seam(const train::ModelOptions<double>& options) {
  MemoryTracker tracker;
  train::ModelOptions<double> o = options;
  o.tracker = &tracker;
  train::Model<double> model(tiny_seam_config(), 3, o);
  model.init(21);
  SeamRun r;
  r.loss = train::forward_backward(model, random_seam_batch(3, 6, 4), 1.0);
  r.grads.assign(model.grads().begin(), model.grads().end());
  r.activation_bytes = model.activations().bytes();
  EXPECT_EQ(r.activation_bytes, tracker.current(MemoryCategory::kActivations));
  return r;
}

}  // namespace book::testing
