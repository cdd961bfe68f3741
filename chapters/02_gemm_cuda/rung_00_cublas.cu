// Rung 0, the peer: cuBLAS in the same harness, on the same row-major buffers.
// Row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ over the same memory, so cuBLAS is called with
// the operands swapped and no transposes: (n × k)·(k × m) in its terms.
#include <cublas_v2.h>
#include <cuda_bf16.h>

#include "chapters/02_gemm_cuda/kernels.h"
#include "common/check.h"
#include "common/cuda.h"

namespace book::gemm_cuda {
namespace {

#define BOOK_CUBLAS_CHECK(call)                                                     \
  do {                                                                              \
    const cublasStatus_t book_cublas_status_ = (call);                              \
    BOOK_CHECK(book_cublas_status_ == CUBLAS_STATUS_SUCCESS,                        \
               #call << " failed: " << cublasGetStatusString(book_cublas_status_)); \
  } while (false)

}  // namespace

Cublas::Cublas() { BOOK_CUBLAS_CHECK(cublasCreate(&handle_)); }

Cublas::~Cublas() {
  if (handle_ != nullptr) cublasDestroy(handle_);
}

void Cublas::sgemm(const float* a, const float* b, float* c, GemmShape s, cudaStream_t stream) {
  check_gemm_args(a, b, c, s);
  const float alpha = 1.0f, beta = 0.0f;
  BOOK_CUBLAS_CHECK(cublasSetStream(handle_, stream));
  // Pedantic: FP32 throughout, no TF32 even if a library default changes.
  BOOK_CUBLAS_CHECK(cublasSetMathMode(handle_, CUBLAS_PEDANTIC_MATH));
  BOOK_CUBLAS_CHECK(cublasSgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, s.n, s.m, s.k, &alpha, b, s.n, a,
                                s.k, &beta, c, s.n));
}

void Cublas::sgemm_tf32(const float* a, const float* b, float* c, GemmShape s,
                        cudaStream_t stream) {
  check_gemm_args(a, b, c, s);
  const float alpha = 1.0f, beta = 0.0f;
  BOOK_CUBLAS_CHECK(cublasSetStream(handle_, stream));
  BOOK_CUBLAS_CHECK(cublasSetMathMode(handle_, CUBLAS_TF32_TENSOR_OP_MATH));
  BOOK_CUBLAS_CHECK(cublasSgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, s.n, s.m, s.k, &alpha, b, s.n, a,
                                s.k, &beta, c, s.n));
}

void Cublas::gemm_bf16(const __nv_bfloat16* a, const __nv_bfloat16* b, float* c, GemmShape s,
                       cudaStream_t stream) {
  check_gemm_args(a, b, c, s);
  const float alpha = 1.0f, beta = 0.0f;
  BOOK_CUBLAS_CHECK(cublasSetStream(handle_, stream));
  BOOK_CUBLAS_CHECK(cublasSetMathMode(handle_, CUBLAS_DEFAULT_MATH));
  BOOK_CUBLAS_CHECK(cublasGemmEx(handle_, CUBLAS_OP_N, CUBLAS_OP_N, s.n, s.m, s.k, &alpha, b,
                                 CUDA_R_16BF, s.n, a, CUDA_R_16BF, s.k, &beta, c, CUDA_R_32F, s.n,
                                 CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

}  // namespace book::gemm_cuda
