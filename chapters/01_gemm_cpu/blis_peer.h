/// @file
/// BLIS, the second peer, called through its native API (bli_sgemm) so that its own cblas_*
/// symbols never stand in for OpenBLAS's.
#pragma once

namespace book::gemm {

/// Row-major C = A·B with bli_sgemm (same conventions as the rungs in gemm.h).
void blis_matmul(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c,
                 int ldc);

/// Sets how many threads BLIS uses.
void blis_set_threads(int threads);

}  // namespace book::gemm
