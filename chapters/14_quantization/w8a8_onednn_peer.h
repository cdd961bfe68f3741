/// @file
/// The W8A8 GEMM's peer: oneDNN's INT8 matmul, s8 activations × s8 weights → exact s32 sums, the
/// same work as w8a8_accumulate. Set up as a user at their best would: shapes fixed when the
/// primitive is made (so oneDNN picks its kernel for them), weights reordered once into the
/// blocked layout the primitive asks for (format `any`), outside any timed loop.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace book::quant {

/// One oneDNN INT8 matmul, acc[m][n] = Σ_k src[m][k] · w[n][k].
class OneDnnInt8Matmul {
 public:
  /// Makes the primitive for `tokens` × `cols` activations and the [rows][cols] row-major s8
  /// weights `w` (rows = output channels), and reorders them once. Throws book::Error on bad
  /// sizes or when oneDNN refuses the problem.
  OneDnnInt8Matmul(std::span<const std::int8_t> w, int rows, int cols, int tokens);
  ~OneDnnInt8Matmul();
  OneDnnInt8Matmul(const OneDnnInt8Matmul&) = delete;             ///< owns oneDNN objects
  OneDnnInt8Matmul& operator=(const OneDnnInt8Matmul&) = delete;  ///< owns oneDNN objects

  /// acc = src · wᵀ: src [tokens][cols] s8, acc [tokens][rows] s32 (both row-major, the sizes
  /// given at construction; checked).
  void run(std::span<const std::int8_t> src, std::span<std::int32_t> acc);

  /// The implementation oneDNN chose, e.g. "brg:avx512_core_vnni".
  std::string implementation() const;
  /// True unless oneDNN runs a reference or non-VNNI path on a CPU that has AVX-512 VNNI (or a
  /// reference path anywhere): a ratio against it would flatter us.
  bool at_best() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

/// "oneDNN 2.6.3 (OpenMP runtime), ISA: AVX-512 with VNNI and BF16 (its best on this CPU)".
std::string onednn_description();

/// Sets the OpenMP threads oneDNN runs on (it is built with the OpenMP runtime).
void set_onednn_threads(int threads);

}  // namespace book::quant
