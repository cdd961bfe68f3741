// Test helpers: a tiny model shape, a random batch with some targets ignored, and random
// parameters of a larger scale than GPT-2's initialisation so every path carries signal.
#pragma once

#include <cstdint>
#include <string>

#include "chapters/04_training_baseline/data.h"
#include "chapters/04_training_baseline/model.h"
#include "common/rng.h"

namespace book::train::testing {

/// 3 layers, 4 heads of 3, vocab 12, context 5: small enough for finite differences, with
/// enough heads for 1, 2 and 4 tensor-parallel ranks and enough layers for 3 stages.
inline Config tiny_config() {
  Config c;
  c.vocab_size = 12;
  c.context = 5;
  c.n_layer = 3;
  c.n_head = 4;
  c.d_model = 12;
  return c;
}

/// `batch` sequences of `seq_len` random tokens; every fourth target is -1 (ignored).
inline Batch tiny_batch(std::uint64_t seed, int batch = 2, int seq_len = 5) {
  Batch b;
  b.batch = batch;
  b.seq_len = seq_len;
  Rng rng(seed);
  for (int i = 0; i < batch * seq_len; ++i) {
    b.tokens.push_back(static_cast<int>(rng.uniform_int(0, 11)));
    b.targets.push_back(i % 4 == 0 ? -1 : static_cast<int>(rng.uniform_int(0, 11)));
  }
  return b;
}

/// Uniform(-0.5, 0.5) parameters, gains around 1.
template <typename T>
void randomise(Model<T>& model, std::uint64_t seed) {
  Rng rng(seed);
  for (auto& p : model.params()) p = static_cast<T>(rng.uniform(-0.5, 0.5));
  for (const auto& slot : model.layout().slots())
    if (slot.name.find("gain") != std::string::npos)
      for (std::size_t i = 0; i < slot.size(); ++i) model.params()[slot.offset + i] += T(1);
}

}  // namespace book::train::testing
