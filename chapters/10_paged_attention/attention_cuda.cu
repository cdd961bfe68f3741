// The CUDA paged attention: one thread block per (head, query row), the GPU version of the
// reference kernel, in three passes like the CPU one. Pass 1: one warp per position, its 32 lanes
// across head_dim (a key row is head_dim consecutive floats: coalesced), a shuffle reduction, the
// score kept in shared memory. Pass 2: the block's max and sum of exp. Pass 3: threads across
// head_dim (and, when head_dim < 128, several groups of positions), accumulating p_t · V_t.
// Every sum's order depends on the position, never on the block boundaries, so the paged and the
// contiguous layouts give the same bits here too. This is vLLM's "v1" shape; its v2 also splits
// long contexts across blocks, which is what a context too long for shared memory would need.
#include <cuda_runtime.h>

#include <cmath>

#include "chapters/10_paged_attention/attention_cuda_kernel.h"
#include "common/cuda.h"

namespace book::kv::gpu {
namespace {

constexpr int kThreads = 128, kWarps = kThreads / 32;

__global__ void paged_attention_kernel(DevicePagedBatch b, float scale) {
  extern __shared__ float shared[];
  const int head = blockIdx.x, row = blockIdx.y, tid = threadIdx.x;
  const int d = b.head_dim, bs = b.block_size;
  const int n = b.context_lens[row];
  float* q = shared;                       // [d], pre-scaled
  float* scores = q + d;                   // [max_context]
  float* reduce = scores + b.max_context;  // [kWarps]
  float* partial = reduce + kWarps;        // [kThreads]
  const float* query = b.queries + (static_cast<size_t>(row) * b.n_head + head) * d;
  for (int i = tid; i < d; i += kThreads) q[i] = query[i] * scale;
  __syncthreads();

  const int warp = tid / 32, lane = tid % 32;
  const int* table = b.block_tables + static_cast<size_t>(row) * b.max_blocks;
  float local_max = -INFINITY;
  for (int t = warp; t < n; t += kWarps) {
    const float* k =
        b.keys + ((static_cast<size_t>(table[t / bs]) * b.n_head + head) * bs + t % bs) * d;
    float dot = 0;
    for (int i = lane; i < d; i += 32) dot += q[i] * k[i];
    for (int offset = 16; offset > 0; offset /= 2) dot += __shfl_xor_sync(0xffffffffu, dot, offset);
    if (lane == 0) scores[t] = dot;
    local_max = fmaxf(local_max, dot);
  }
  if (lane == 0) reduce[warp] = local_max;
  __syncthreads();
  float max_score = -INFINITY;
  for (int w = 0; w < kWarps; ++w) max_score = fmaxf(max_score, reduce[w]);
  __syncthreads();  // everyone has read reduce[] before it is reused

  float local_sum = 0;
  for (int t = tid; t < n; t += kThreads) {
    const float p = expf(scores[t] - max_score);
    scores[t] = p;
    local_sum += p;
  }
  for (int offset = 16; offset > 0; offset /= 2)
    local_sum += __shfl_xor_sync(0xffffffffu, local_sum, offset);
  if (lane == 0) reduce[warp] = local_sum;
  __syncthreads();
  float sum = 0;
  for (int w = 0; w < kWarps; ++w) sum += reduce[w];

  // Pass 3: `groups` groups of d threads, group g summing positions g, g + groups, ...
  const int groups = d <= kThreads ? kThreads / d : 1;
  const int g = tid / d < groups ? tid / d : -1;
  float* out = b.out + (static_cast<size_t>(row) * b.n_head + head) * d;
  for (int i0 = 0; i0 < d; i0 += kThreads) {  // head_dim > 128: more than one pass over dims
    const int i = d <= kThreads ? tid % d : i0 + tid;
    float acc = 0;
    if (g >= 0 && i < d)
      for (int t = g; t < n; t += groups) {
        const float* v =
            b.values + ((static_cast<size_t>(table[t / bs]) * b.n_head + head) * bs + t % bs) * d;
        acc += scores[t] * v[i];
      }
    partial[tid] = acc;
    __syncthreads();
    if (g == 0 && i < d) {
      float total = 0;
      for (int other = 0; other < groups; ++other) total += partial[other * d + tid % d];
      out[i] = total / sum;
    }
    __syncthreads();
    if (d <= kThreads) break;
  }
}

}  // namespace

void launch_paged_attention(const DevicePagedBatch& b) {
  const size_t shared_bytes =
      (static_cast<size_t>(b.head_dim) + b.max_context + kWarps + kThreads) * sizeof(float);
  int device = 0, limit = 0;
  BOOK_CUDA_CHECK(cudaGetDevice(&device));
  BOOK_CUDA_CHECK(cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  BOOK_CHECK(shared_bytes <= static_cast<size_t>(limit),
             "launch_paged_attention: a context of " << b.max_context << " positions needs "
                                                     << shared_bytes
                                                     << " bytes of shared memory; this GPU "
                                                        "gives a block "
                                                     << limit
                                                     << " (split long contexts, as vLLM's v2 "
                                                        "kernel does)");
  BOOK_CUDA_CHECK(cudaFuncSetAttribute(paged_attention_kernel,
                                       cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       static_cast<int>(shared_bytes)));
  const dim3 grid(b.n_head, b.num_queries);
  paged_attention_kernel<<<grid, kThreads, shared_bytes>>>(b, 1.0f / sqrtf(float(b.head_dim)));
  BOOK_CUDA_CHECK(cudaGetLastError());
}

}  // namespace book::kv::gpu
