/// @file
/// The CUDA paged attention seen from the host: one layer's pool uploaded once, query batches run
/// with the same contract as paged_attention_reference, and kernel timings. Built wherever nvcc
/// is; runs where a GPU is (tests skip, saying so, without one).
#pragma once

#include <span>

#include "chapters/10_paged_attention/paged_attention.h"
#include "common/device_buffer.h"

namespace book::kv {

/// One layer's K/V pool on the GPU and the kernel of attention_cuda.cu.
class GpuPagedAttention {
 public:
  /// Uploads `kv`'s keys and values. Throws book::Error if the view is malformed or CUDA fails
  /// (no GPU included).
  explicit GpuPagedAttention(const LayerKvView& kv);

  /// Uploads the queries and their block tables, runs the kernel, and writes each query's output
  /// back to its `out`. Same arguments and checks as paged_attention_reference.
  void run(std::span<const AttentionQuery> queries);
  /// Runs once to warm up, then `repeats` timed launches (CUDA events) on the uploaded batch;
  /// returns the median milliseconds per launch. Outputs are written as by run().
  double time_ms(std::span<const AttentionQuery> queries, int repeats);
  /// Bytes of keys and values a launch must read for `queries` (every head of every position
  /// once): what an effective bandwidth divides.
  static double bytes_read(const LayerKvView& kv, std::span<const AttentionQuery> queries);

 private:
  void upload(std::span<const AttentionQuery> queries);
  void download(std::span<const AttentionQuery> queries);

  LayerKvView host_;
  cuda::DeviceBuffer<float> keys_, values_, queries_, out_;
  cuda::DeviceBuffer<int> tables_, context_lens_;
  int max_blocks_ = 0, max_context_ = 0, num_queries_ = 0;
};

}  // namespace book::kv
