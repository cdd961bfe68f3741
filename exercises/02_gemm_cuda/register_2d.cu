// Rung 5 (exercise cuda_gemm.register_2d), part 2 of 2: the kernel. Read
// chapters/02_gemm_cuda/README.md, "Rung 5"; the previous rung's file in chapters/02_gemm_cuda/
// shows the shape of a launcher. Use your map functions (register_2d_map.h) for every index, and
// read_chunk / write_chunk (chapters/02_gemm_cuda/device_tiles.cuh) at the edges of the matrices.
#include <cuda_bf16.h>

#include "chapters/02_gemm_cuda/device_tiles.cuh"
#include "chapters/02_gemm_cuda/kernels.h"
#include "chapters/02_gemm_cuda/tiles.h"
#include "exercises/02_gemm_cuda/register_2d_map.h"

namespace book::gemm_cuda {

void sgemm_register_2d(const float* a, const float* b, float* c, GemmShape s, cudaStream_t stream) {
  check_gemm_args(a, b, c, s);
  (void)stream;
  BOOK_NOT_IMPLEMENTED("cuda_gemm.register_2d", "exercises/02_gemm_cuda/register_2d.cu",
                       "chapters/02_gemm_cuda/README.md, section Rung 5: 2D register blocking — exercise cuda_gemm.register_2d");
}

}  // namespace book::gemm_cuda
