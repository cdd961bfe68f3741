/// @file
/// Inside the weight-only GEMV (gemv.h): the view of a prepared matrix that every path reads, and
/// the three paths, each computing a range of output rows. Not for use outside gemv*.cc.
#pragma once

#include <cstdint>
#include <span>

#include "chapters/14_quantization/gemv.h"

namespace book::quant::detail {

/// How a stored value becomes a number before its offset and scale.
enum class Format {
  kFp32,          ///< a float, no scale (FP32 baseline)
  kInt8Signed,    ///< one two's-complement byte
  kInt8Unsigned,  ///< one unsigned byte (asymmetric INT8)
  kInt4Blocked,   ///< two a byte in blocks of 32 values: byte j = value j | value (j + 16) << 4
};

/// A prepared matrix as the kernels read it.
struct GemvView {
  Format format = Format::kFp32;        ///< what the bytes hold
  const std::uint8_t* data = nullptr;   ///< integers, row-major, `stride` values a row
  const float* fp32 = nullptr;          ///< kFp32: the weights, `stride` floats a row
  int rows = 0;                         ///< output rows
  int cols = 0;                         ///< real inputs (x's length)
  int stride = 0;                       ///< values per stored row (a multiple of 32 but for kFp32)
  int groups = 1;                       ///< scales per row
  int group_cols = 0;                   ///< values per group (per channel: `stride`; kFp32: cols)
  int blocks_per_group = 0;             ///< group_cols / 32 (kFp32: the whole blocks of a row)
  const float* scales = nullptr;        ///< scale(r, g) = scales[r·scale_stride + g]; null: 1
  int scale_stride = 0;                 ///< 0 for one scale per tensor
  const std::uint8_t* zeros = nullptr;  ///< asymmetric: offset(r, g) = zeros[r·scale_stride + g]
  float offset = 0;                     ///< symmetric: the offset of every group (0 or 8)
};

/// One call's activations and outputs.
struct GemvCall {
  const float* x = nullptr;       ///< [m][x_stride]; zero beyond cols when padded
  int x_stride = 0;               ///< floats between x's rows
  const float* x_sums = nullptr;  ///< [m][groups]: Σ x over each group (null when no offsets)
  int m = 0;                      ///< x's rows
  float* y = nullptr;             ///< [m][rows]
};

/// Bytes of one stored row.
inline long row_bytes(const GemvView& v) {
  return v.format == Format::kInt4Blocked ? v.stride / 2 : v.stride;
}

/// y rows [r0, r1) with plain loops.
void gemv_rows_plain(const GemvView& v, const GemvCall& c, int r0, int r1);
/// The same with AVX2 + FMA.
void gemv_rows_avx2(const GemvView& v, const GemvCall& c, int r0, int r1);
/// The same with AVX-512 F + BW (only where cpu_isa() is kAvx512).
void gemv_rows_avx512(const GemvView& v, const GemvCall& c, int r0, int r1);

/// kAuto resolved; throws book::Error naming the CPU if `path` is not available on it.
GemvPath resolve(GemvPath path, const char* who);
/// Splits rows [0, v.rows) over `team` in runs of 4 and runs `path` on each member's run.
void run_rows(kv::ThreadTeam& team, GemvPath path, const GemvView& v, const GemvCall& c);

}  // namespace book::quant::detail
