#include "chapters/10_paged_attention/attention_cuda.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <vector>

#include "chapters/10_paged_attention/attention_cuda_kernel.h"
#include "chapters/10_paged_attention/kv_shape.h"
#include "common/check.h"
#include "common/cuda.h"

namespace book::kv {

GpuPagedAttention::GpuPagedAttention(const LayerKvView& kv) : host_(kv) {
  check_attention_args("GpuPagedAttention", kv, {});
  const std::size_t numbers =
      static_cast<std::size_t>(kv.num_blocks) * kv.n_head * kv.block_size * kv.head_dim;
  keys_ = cuda::DeviceBuffer<float>(numbers);
  values_ = cuda::DeviceBuffer<float>(numbers);
  keys_.copy_from_host({kv.keys, numbers});
  values_.copy_from_host({kv.values, numbers});
}

void GpuPagedAttention::upload(std::span<const AttentionQuery> queries) {
  check_attention_args("GpuPagedAttention::run", host_, queries);
  const int width = host_.n_head * host_.head_dim;
  num_queries_ = static_cast<int>(queries.size());
  max_blocks_ = 1;
  max_context_ = 1;
  for (const AttentionQuery& q : queries) {
    max_context_ = std::max(max_context_, q.context_len);
    max_blocks_ = std::max(max_blocks_, blocks_for(q.context_len, host_.block_size));
  }
  std::vector<float> rows(static_cast<std::size_t>(num_queries_) * width);
  std::vector<int> tables(static_cast<std::size_t>(num_queries_) * max_blocks_, 0), lens;
  for (int i = 0; i < num_queries_; ++i) {
    std::copy_n(queries[i].query, width, rows.begin() + static_cast<long>(i) * width);
    const int used = blocks_for(queries[i].context_len, host_.block_size);
    std::copy_n(queries[i].block_table.begin(), used,
                tables.begin() + static_cast<long>(i) * max_blocks_);
    lens.push_back(queries[i].context_len);
  }
  queries_ = cuda::DeviceBuffer<float>(rows.size());
  out_ = cuda::DeviceBuffer<float>(rows.size());
  tables_ = cuda::DeviceBuffer<int>(tables.size());
  context_lens_ = cuda::DeviceBuffer<int>(lens.size());
  queries_.copy_from_host(rows);
  tables_.copy_from_host(tables);
  context_lens_.copy_from_host(lens);
  out_.fill_poison();  // an output the kernel forgets stays NaN
}

void GpuPagedAttention::download(std::span<const AttentionQuery> queries) {
  const int width = host_.n_head * host_.head_dim;
  std::vector<float> rows(out_.size());
  out_.copy_to_host(rows);
  for (int i = 0; i < num_queries_; ++i)
    std::copy_n(rows.begin() + static_cast<long>(i) * width, width, queries[i].out);
}

namespace {
gpu::DevicePagedBatch batch_of(const LayerKvView& kv, const float* keys, const float* values,
                               const float* queries, float* out, const int* tables, int max_blocks,
                               const int* lens, int num_queries, int max_context) {
  return {keys, values, kv.num_blocks, kv.block_size, kv.n_head,   kv.head_dim, queries,
          out,  tables, max_blocks,    lens,          num_queries, max_context};
}
}  // namespace

void GpuPagedAttention::run(std::span<const AttentionQuery> queries) {
  upload(queries);
  if (num_queries_ == 0) return;
  gpu::launch_paged_attention(batch_of(host_, keys_.data(), values_.data(), queries_.data(),
                                       out_.data(), tables_.data(), max_blocks_,
                                       context_lens_.data(), num_queries_, max_context_));
  BOOK_CUDA_CHECK(cudaDeviceSynchronize());
  download(queries);
}

double GpuPagedAttention::time_ms(std::span<const AttentionQuery> queries, int repeats) {
  BOOK_CHECK(repeats >= 1, "GpuPagedAttention::time_ms: repeats must be >= 1, got " << repeats);
  run(queries);  // uploads, warms up, writes the outputs
  const auto batch =
      batch_of(host_, keys_.data(), values_.data(), queries_.data(), out_.data(), tables_.data(),
               max_blocks_, context_lens_.data(), num_queries_, max_context_);
  cudaEvent_t start, stop;
  BOOK_CUDA_CHECK(cudaEventCreate(&start));
  BOOK_CUDA_CHECK(cudaEventCreate(&stop));
  std::vector<float> times;
  for (int r = 0; r < repeats; ++r) {
    BOOK_CUDA_CHECK(cudaEventRecord(start));
    gpu::launch_paged_attention(batch);
    BOOK_CUDA_CHECK(cudaEventRecord(stop));
    BOOK_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    BOOK_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    times.push_back(ms);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

double GpuPagedAttention::bytes_read(const LayerKvView& kv,
                                     std::span<const AttentionQuery> queries) {
  double positions = 0;
  for (const AttentionQuery& q : queries) positions += q.context_len;
  return 2.0 * positions * kv.n_head * kv.head_dim * sizeof(float);
}

}  // namespace book::kv
