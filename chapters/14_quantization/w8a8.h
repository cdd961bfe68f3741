/// @file
/// W8A8: both operands of a linear layer in INT8. Weights are symmetric INT8 with one scale per
/// output channel (quant.h's per-channel scheme, rows = output channels); activations are
/// quantised on the fly, symmetric INT8 with one scale per token (row), because a token's range
/// is only known when it arrives. The products are integers, s8 × s8, summed exactly in int32,
/// and the two scales are applied once per output:
///
///   y[t][n] = s_x[t] · s_w[n] · Σ_k q_x[t][k] · q_w[n][k]  (+ bias[n])
///
/// so the inner loop is integer multiply-adds, which CPUs run 4× (AVX-512 VNNI's vpdpbusd) as
/// many per instruction as FP32 FMAs. The int32 sums are exact whatever the order, so the fast
/// kernel must equal the reference bit for bit; only the float epilogue rounds.
///
/// vpdpbusd multiplies an **unsigned** byte by a signed one. The kernel therefore stores the
/// activations as q_x + 128 (unsigned) and subtracts 128 · Σ_k q_w[n][k], precomputed per output
/// channel when the weights are packed: Σ (q_x + 128) · q_w − 128 · Σ q_w = Σ q_x · q_w. The AVX2
/// kernel widens both to int16 and uses vpmaddwd, whose pair sums cannot overflow (unlike
/// vpmaddubsw's, which saturate at int16 and would make the result inexact).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "chapters/14_quantization/quant.h"

namespace book::quant {

/// The inner loops the W8A8 GEMM can run, slowest first.
enum class W8A8Kernel {
  kReference,   ///< plain C++ loops, the definition
  kAvx2,        ///< int8 widened to int16, vpmaddwd (x86-64-v3, the build's baseline)
  kAvx512Vnni,  ///< vpdpbusd on 512-bit registers (AVX-512 F, BW, VL and VNNI)
};

/// "reference", "avx2" or "avx512-vnni".
std::string w8a8_kernel_name(W8A8Kernel kernel);
/// Whether this CPU runs `kernel` (asked at run time, never assumed from the build).
bool w8a8_kernel_available(W8A8Kernel kernel);
/// The fastest kernel this CPU runs.
W8A8Kernel best_w8a8_kernel();

/// The largest reduction length the book accepts: 127 · 127 · 65536 < 2^30, so every partial sum
/// of the reference fits in int32, and the kernels, whose int32 adds wrap rather than saturate
/// (vpdpbusd, vpaddd), reach the same exact sum even where their offset partial sums (VNNI's
/// unsigned activations reach 255) pass 2^31 on the way.
inline constexpr int kW8A8MaxCols = 65536;

/// Activations quantised per token: symmetric INT8, s_x[t] = max_k |x[t][k]| / 127 (1 for an
/// all-zero token), q = lround(x / s_x).
struct W8A8Activations {
  int tokens = 0;              ///< rows
  int cols = 0;                ///< input features (the reduction dimension)
  std::vector<std::int8_t> q;  ///< [tokens][cols]
  std::vector<float> scales;   ///< one per token
};

/// Quantises `x`, [tokens][cols] row-major, into `out` (its storage reused: no allocation once it
/// is large enough). Throws book::Error if tokens < 1, cols is outside [1, kW8A8MaxCols], x does
/// not hold tokens · cols values, or a value is NaN or infinite.
void quantize_activations(std::span<const float> x, int tokens, int cols, W8A8Activations& out);

/// Per-channel INT8 weights, packed once for one kernel: the integers in the kernel's blocked
/// order, the per-channel scales and (VNNI) 128 · each channel's sum of integers.
class W8A8Weights {
 public:
  /// Packs `w` for `kernel`. Throws book::Error unless w is a consistent (check_matrix) symmetric
  /// INT8 per-channel matrix with at most kW8A8MaxCols columns and `kernel` runs on this CPU.
  explicit W8A8Weights(const QuantizedMatrix& w, W8A8Kernel kernel = best_w8a8_kernel());

  int rows() const { return rows_; }                         ///< output channels (n)
  int cols() const { return cols_; }                         ///< input features (k)
  W8A8Kernel kernel() const { return kernel_; }              ///< the kernel it is packed for
  std::span<const float> scales() const { return scales_; }  ///< s_w, one per output channel
  /// The integers as the kernel reads them (layout private to w8a8_kernels.cc).
  std::span<const std::int8_t> packed() const { return packed_; }
  /// 128 · Σ_k q_w[n][k] per output channel, padded (VNNI's unsigned-activation correction).
  std::span<const std::int32_t> correction() const { return correction_; }
  /// The row-major integers [rows][cols] (the reference kernel reads these).
  std::span<const std::int8_t> plain() const { return plain_; }

 private:
  int rows_ = 0, cols_ = 0;
  W8A8Kernel kernel_ = W8A8Kernel::kReference;
  std::vector<float> scales_;
  std::vector<std::int8_t> packed_;
  std::vector<std::int32_t> correction_;
  std::vector<std::int8_t> plain_;
};

/// The exact integer sums acc[t][n] = Σ_k q_x[t][k] · q_w[n][k], [tokens][rows] row-major, with
/// the weights' kernel, on up to `threads` threads (chapter 1's team; 0 = sgemm_thread_count()).
/// Throws book::Error if the column counts differ or acc does not hold tokens · rows values.
void w8a8_accumulate(const W8A8Activations& x, const W8A8Weights& w, std::span<std::int32_t> acc,
                     int threads = 0);

/// The same sums with plain loops over the row-major integers: the definition the kernels are
/// tested against.
void w8a8_accumulate_reference(const W8A8Activations& x, const W8A8Weights& w,
                               std::span<std::int32_t> acc);

/// y[t][n] = s_x[t] · s_w[n] · acc[t][n] + bias[n] (bias empty: no bias), [tokens][rows]. Each
/// output is rounded three times in float (acc to float, the scale product, the product; then
/// the bias add), so it is within 4 · 2^-24 relative of the exact value, plus half an ulp of y
/// for the bias. Throws book::Error on mismatched sizes or a bias that is not finite.
void w8a8_gemm(const W8A8Activations& x, const W8A8Weights& w, std::span<const float> bias,
               std::span<float> y, int threads = 0);

/// The whole dynamic-quantisation linear layer, y = x · Wᵀ + bias with x in FP32: quantise the
/// activations per token into `scratch`, then w8a8_gemm. What PyTorch's dynamically quantised
/// Linear computes per call.
void w8a8_linear(std::span<const float> x, int tokens, const W8A8Weights& w,
                 std::span<const float> bias, std::span<float> y, W8A8Activations& scratch,
                 int threads = 0);

}  // namespace book::quant
