/// @file
/// Where the CUDA weight-only GEMV (gemv_cuda.cu) finds a weight: which byte, which nibble, which
/// scale and zero point. Plain arithmetic on quant.h's layout (the GPU reads QuantizedMatrix's
/// arrays as they are, with no re-packing), compiled for the host too so that a CPU test can check
/// every index against QuantizedMatrix::q(), scale() and zero() on machines without a GPU.
#pragma once

#include <cstdint>

/// `__host__ __device__` under nvcc, nothing elsewhere: the index functions compile for both sides.
#if defined(__CUDACC__)
#define BOOK_GEMV_HD __host__ __device__
#else
#define BOOK_GEMV_HD
#endif

namespace book::quant::gpu {

/// The shape of a quantised matrix as the kernel sees it (quant.h's QuantizedMatrix, flattened).
struct GemvDims {
  int rows = 0;          ///< output channels
  int cols = 0;          ///< inputs
  bool int4 = false;     ///< two values a byte (value 2i low nibble, 2i + 1 high)
  int group_cols = 0;    ///< values sharing a scale along a row (cols for per channel/tensor)
  int scale_stride = 0;  ///< scales per row (0: one scale for the tensor)
};

/// Where value (row, col) lives.
struct WeightIndex {
  long byte = 0;   ///< index into QuantizedMatrix::data
  int shift = 0;   ///< 0, or 4 for an INT4 value in a high nibble
  long scale = 0;  ///< index into scales (and zeros, when asymmetric)
};

/// Bytes of one stored row.
BOOK_GEMV_HD inline long gemv_row_bytes(const GemvDims& d) { return d.int4 ? d.cols / 2 : d.cols; }

/// The byte, nibble and scale of value (row, col).
BOOK_GEMV_HD inline WeightIndex weight_index(const GemvDims& d, int row, int col) {
  WeightIndex at;
  at.byte = static_cast<long>(row) * gemv_row_bytes(d) + (d.int4 ? col / 2 : col);
  at.shift = d.int4 && (col % 2 == 1) ? 4 : 0;
  at.scale =
      static_cast<long>(row) * d.scale_stride + (d.scale_stride == 0 ? 0 : col / d.group_cols);
  return at;
}

/// The first column that byte `byte_in_row` of a row holds (2·byte for INT4).
BOOK_GEMV_HD inline int first_col_of_byte(const GemvDims& d, long byte_in_row) {
  return static_cast<int>(d.int4 ? 2 * byte_in_row : byte_in_row);
}

/// Whether a 16-byte chunk of a row lies in one group, so that its scale can be applied once to
/// the chunk's partial sum: the chunk's values (16, or 32 for INT4) divide the group.
BOOK_GEMV_HD inline bool chunk_in_one_group(const GemvDims& d) {
  return d.group_cols % (d.int4 ? 32 : 16) == 0;
}

}  // namespace book::quant::gpu
