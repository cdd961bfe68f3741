/// @file
/// Argument checks shared by the ladder's dispatcher and sgemm: validated once, at the public
/// boundary, so the rungs themselves can stay free of checks. Also the stages' quick result check.
#pragma once

#include <span>

namespace book::gemm {

/// Throws book::Error unless m, n, k are positive, the pointers are non-null, and each leading
/// dimension is at least the length of the row it strides over (`a_row` = stored row length of A,
/// `b_row` of B; C's row is n). `who` names the caller in the message.
void check_gemm_args(const char* who, int m, int n, int k, const float* a, int lda, int a_row,
                     const float* b, int ldb, int b_row, const float* c, int ldc);

/// The stages' sanity check before timing (the graded tests do the careful one): every element of
/// `c` is within a loose multiple of float rounding of `ref`, for k-term sums of products of values
/// in [-1, 1): (k + 4) · 2^-23 · k. False for NaN, and for spans of different sizes.
bool close_to(std::span<const float> c, std::span<const float> ref, int k);

}  // namespace book::gemm
