/// @file
/// OpenBLAS, the peer every rung is measured against (Debian's pthread build).
#pragma once

#include <string>

namespace book::gemm {

/// Row-major C = A·B with OpenBLAS's cblas_sgemm (same conventions as the rungs in gemm.h).
void openblas_matmul(int m, int n, int k, const float* a, int lda, const float* b, int ldb,
                     float* c, int ldc);

/// Sets how many threads OpenBLAS uses (1 for the single-threaded comparison).
void openblas_set_threads(int threads);

/// The kernel family OpenBLAS picked for this CPU at load time, e.g. "Haswell" or "SkylakeX".
std::string openblas_core_name();

/// The shared library that cblas_sgemm resolved to (to prove it is OpenBLAS, not another BLAS).
std::string openblas_cblas_library();

}  // namespace book::gemm
