/// @file
/// Weight-only GEMV and small-m GEMM: y = W·x with W quantised (INT8 or INT4, quant.h) and x, y
/// in FP32, for a decode step (m = 1) or a small decode batch (m up to a few dozen). At m = 1 a
/// GEMV reads every weight once and does two flops with it, so it runs at the speed memory
/// delivers the weights: a matrix stored in fewer bytes is read sooner. The kernels dequantise in
/// registers (load the bytes, widen them to int32, convert to float, FMA with x) and multiply by
/// the scale once per group; they never write a dequantised matrix.
///
/// The arithmetic: for a group g of row r with scale s and offset o (the zero point z when
/// asymmetric, 8 for symmetric INT4's stored q + 8, 0 for symmetric INT8),
///   Σ_c s·(q_c − o)·x_c = s·(Σ_c q_c·x_c) − s·o·(Σ_c x_c),
/// so the inner loop is a plain dot product of the stored integers with x, and the offset costs
/// one multiply per group with the group's sum of x (computed once per call, not per row).
///
/// The layout (QuantizedGemv keeps it, made once when the weights are loaded): each row padded
/// with zeros to a multiple of 32 values (no padding when cols is a multiple of 32, as in every
/// model), and INT4 re-packed in blocks of 32 values: byte j of a block holds value j in its low
/// nibble and value j + 16 in its high one (quant.h's order is 2i low, 2i + 1 high), so that one
/// 16-byte load, a mask and a shift give two runs of 16 consecutive values. The scales and zero
/// points are kept as quant.h stores them. bytes_read() counts the bytes the kernel reads. The
/// integers are asked to live on 2 MiB pages (madvise; a server's weights are one big allocation
/// made once): on 4 KiB pages a 64 MiB matrix costs 16384 TLB misses per pass.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "chapters/14_quantization/quant.h"
#include "common/buffer.h"

namespace book::kv {
class ThreadTeam;
}

namespace book::quant {

/// Which code runs the kernel: plain loops, AVX2 + FMA (8 floats a register) or AVX-512 (16).
enum class GemvPath { kAuto, kPlain, kAvx2, kAvx512 };

/// "auto", "plain", "avx2", "avx512".
std::string gemv_path_name(GemvPath path);

/// The path kAuto means on this CPU: AVX-512 where cpu_isa() has it, else AVX2 (the build's
/// baseline, x86-64-v3).
GemvPath best_gemv_path();

/// True when this CPU runs `path` (kAuto and kPlain always).
bool gemv_path_available(GemvPath path);

/// The values a SIMD path handles at once: rows are padded to a multiple of this, and groups
/// (Granularity::kGroup) must be a multiple of it for a SIMD path.
inline constexpr int kGemvBlock = 32;

/// The threads a kernel splits rows over: `threads`, or every hardware thread when it is 0.
/// Throws book::Error if threads < 0.
int gemv_threads(int threads);

/// y = W·x for a quantised W, with the weights re-laid once at construction (see the file
/// comment). Supports INT8 and INT4, symmetric and asymmetric, per tensor, per channel and in
/// groups; the SIMD paths need groups of a multiple of kGemvBlock (32/64/128 are), kAuto falls
/// back to the plain path otherwise. Not thread-safe: one run() at a time.
class QuantizedGemv {
 public:
  /// Copies and re-lays `w`. Throws book::Error if w is inconsistent (check_matrix), `path` is
  /// not available on this CPU, a SIMD path is asked for with a group size that is not a
  /// multiple of kGemvBlock, or threads < 0 (0: every hardware thread).
  explicit QuantizedGemv(const QuantizedMatrix& w, GemvPath path = GemvPath::kAuto,
                         int threads = 0);
  ~QuantizedGemv();
  QuantizedGemv(QuantizedGemv&&) noexcept;             ///< Movable.
  QuantizedGemv& operator=(QuantizedGemv&&) noexcept;  ///< Movable.

  /// y[t][r] = Σ_c W[r][c]·x[t][c] for t < m: x is [m][cols], y is [m][rows], row-major. Throws
  /// book::Error if m < 1 or the spans do not hold m·cols and m·rows values.
  void run(std::span<const float> x, int m, std::span<float> y);

  int rows() const { return rows_; }       ///< Output channels.
  int cols() const { return cols_; }       ///< Inputs.
  GemvPath path() const { return path_; }  ///< The path that runs (never kAuto).
  int threads() const;                     ///< Threads the rows are split over.
  /// Splits the rows over `threads` from now on (0: every hardware thread). Throws book::Error if
  /// threads < 0.
  void set_threads(int threads);
  const Scheme& scheme() const { return scheme_; }  ///< How W was quantised.
  /// Bytes one run() reads: the stored integers (padding included), the scales, the zero points,
  /// and m·cols·4 of x.
  std::size_t bytes_read(int m) const;

 private:
  Scheme scheme_;
  int rows_ = 0, cols_ = 0, stride_ = 0;  // stride_: values per stored row, padded
  GemvPath path_ = GemvPath::kPlain;
  AlignedBuffer<std::uint8_t, std::size_t{2} << 20> data_;  // on 2 MiB pages where allowed
  std::vector<float> scales_;
  std::vector<std::uint8_t> zeros_;
  std::vector<float> x_padded_, x_sums_;  // per call, kept to avoid reallocating
  std::unique_ptr<kv::ThreadTeam> team_;
};

/// Our FP32 GEMV, written like QuantizedGemv (same loop, same threads; the weights are floats
/// read with plain loads), so that its ratio to the quantised kernels measures the bytes, not the
/// skill of the code. Keeps a view of `w`, which must outlive it.
class Fp32Gemv {
 public:
  /// `w` is [rows][cols], row-major. Throws book::Error if rows or cols < 1, w does not hold
  /// rows·cols values, `path` is not available on this CPU, or threads < 0.
  Fp32Gemv(std::span<const float> w, int rows, int cols, GemvPath path = GemvPath::kAuto,
           int threads = 0);
  ~Fp32Gemv();
  Fp32Gemv(Fp32Gemv&&) noexcept;             ///< Movable.
  Fp32Gemv& operator=(Fp32Gemv&&) noexcept;  ///< Movable.

  /// Same contract as QuantizedGemv::run.
  void run(std::span<const float> x, int m, std::span<float> y);

  int rows() const { return rows_; }       ///< Output channels.
  int cols() const { return cols_; }       ///< Inputs.
  GemvPath path() const { return path_; }  ///< The path that runs (never kAuto).
  int threads() const;                     ///< Threads the rows are split over.
  /// Same as QuantizedGemv::set_threads.
  void set_threads(int threads);
  /// rows·cols·4 bytes of W plus m·cols·4 of x.
  std::size_t bytes_read(int m) const;

 private:
  std::span<const float> w_;
  int rows_ = 0, cols_ = 0;
  GemvPath path_ = GemvPath::kPlain;
  std::unique_ptr<kv::ThreadTeam> team_;
};

}  // namespace book::quant
