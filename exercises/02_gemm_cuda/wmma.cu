// Rung 8 (exercise cuda_gemm.wmma), part 2 of 2: the kernel. Read
// chapters/02_gemm_cuda/README.md, "Rung 8"; the previous rung's file in chapters/02_gemm_cuda/
// shows the shape of a launcher. Use your map functions (wmma_map.h) for every index, and
// read_chunk / write_chunk (chapters/02_gemm_cuda/device_tiles.cuh) at the edges of the matrices.
#include <cuda_bf16.h>

#include "chapters/02_gemm_cuda/device_tiles.cuh"
#include "chapters/02_gemm_cuda/kernels.h"
#include "chapters/02_gemm_cuda/tiles.h"
#include "exercises/02_gemm_cuda/wmma_map.h"

namespace book::gemm_cuda {

void gemm_bf16_wmma(const __nv_bfloat16* a, const __nv_bfloat16* b, float* c, GemmShape s,
                    cudaStream_t stream) {
  check_gemm_args(a, b, c, s);
  (void)stream;
  BOOK_NOT_IMPLEMENTED("cuda_gemm.wmma", "exercises/02_gemm_cuda/wmma.cu",
                       "chapters/02_gemm_cuda/README.md, section Rung 8: tensor cores through WMMA — exercise cuda_gemm.wmma");
}

}  // namespace book::gemm_cuda
