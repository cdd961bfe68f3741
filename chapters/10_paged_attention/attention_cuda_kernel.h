/// @file
/// The CUDA paged-attention kernel's launcher, in plain C++ types so that host code compiled by
/// g++ (attention_cuda.cc) can call what nvcc compiled (attention_cuda.cu).
#pragma once

namespace book::kv::gpu {

/// One layer's pool and a batch of query rows, all in device memory.
struct DevicePagedBatch {
  const float* keys = nullptr;        ///< [num_blocks][n_head][block_size][head_dim]
  const float* values = nullptr;      ///< same layout
  int num_blocks = 0;                 ///< blocks in the pool
  int block_size = 0;                 ///< token slots per block
  int n_head = 0;                     ///< heads
  int head_dim = 0;                   ///< numbers per head
  const float* queries = nullptr;     ///< [num_queries][n_head · head_dim]
  float* out = nullptr;               ///< [num_queries][n_head · head_dim], written
  const int* block_tables = nullptr;  ///< [num_queries][max_blocks], row-major
  int max_blocks = 0;                 ///< the tables' row length
  const int* context_lens = nullptr;  ///< [num_queries], each >= 1
  int num_queries = 0;                ///< query rows
  int max_context = 0;                ///< the largest context_len (sizes shared memory)
};

/// Launches one thread block of 128 threads per (head, query) on the default stream and checks
/// the launch. Throws book::Error if the scores of max_context positions do not fit the device's
/// shared memory, or the launch fails.
void launch_paged_attention(const DevicePagedBatch& batch);

}  // namespace book::kv::gpu
