/// @file
/// The same GPT written with PyTorch's C++ library (libtorch, autograd), on the same weights:
/// the independent reference for our hand-written gradients and the peer of our training step.
/// The header hides libtorch, so only torch_peer.cc needs its (large) headers.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "chapters/04_training_baseline/config.h"
#include "chapters/04_training_baseline/optimizer.h"

namespace book::train {

/// A libtorch GPT whose parameters are copies of a flat buffer in our ParameterLayout.
class TorchGpt {
 public:
  /// Copies `params` (ParameterLayout(config).total() floats). `threads` sets libtorch's intra-op
  /// thread count and `blas_threads` the thread count of the BLAS its matrix products call
  /// (OpenBLAS's own pool); 0 keeps each default. A peer given c cores is at its best with
  /// threads × blas_threads ≤ c: more makes the two pools fight over the cores (on two cores,
  /// 2 × 2 threads ran 3× slower than 1 × 1).
  TorchGpt(const Config& config, const float* params, int threads = 0, int blas_threads = 0);
  ~TorchGpt();
  TorchGpt(const TorchGpt&) = delete;             ///< Owns libtorch tensors.
  TorchGpt& operator=(const TorchGpt&) = delete;  ///< Owns libtorch tensors.

  /// Zeroes the gradients, runs forward and autograd's backward; returns the mean loss over
  /// targets that are not -1 (PyTorch's ignore_index).
  float forward_backward(const std::vector<int>& tokens, const std::vector<int>& targets, int batch,
                         int seq_len);
  /// The gradients of the last forward_backward, flattened in our layout.
  std::vector<float> gradients() const;
  /// One torch::optim::AdamW step (decay on matrices only, as the Trainer does), at `lr`.
  void adamw_step(float lr);
  /// libtorch's intra-op thread count.
  static int threads();
  /// How the peer runs: "libtorch 1.13.0, ATen AVX512, 2 intra-op threads; OpenBLAS 0.3.21, core
  /// Cooperlake (AVX-512, its own choice), checked, 1 thread" (common/peers.h configures them).
  static std::string configuration();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace book::train
