/// @file
/// The steps of the `kv` stage, in the order kv.cc calls them: what a token costs, the memory
/// replay (contiguous vs paged, block sizes), prefix caching, copy-on-write for parallel
/// sampling, decoding the trained model, the pictures and the plot.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "chapters/10_paged_attention/kv_options.h"
#include "chapters/10_paged_attention/replay.h"
#include "chapters/10_paged_attention/workload.h"
#include "common/table.h"

namespace book::kv::stage {

/// KV bytes per token for chapter 4's model and for real models (the formula, counted).
Table kv_cost_table();

/// The memory replay of one workload under every contiguous reservation and the paged server.
struct ReplayRuns {
  std::vector<Request> requests;          ///< the workload
  std::vector<ReplayResult> systems;      ///< contiguous max, pow2, exact; then paged
  std::vector<ReplayResult> block_sizes;  ///< paged with blocks of 1 .. 256
  const ReplayResult& paged() const { return systems.back(); }        ///< paged, default blocks
  const ReplayResult& max_length() const { return systems.front(); }  ///< contiguous, max_len
};

/// Runs the replays of `options` (block sizes only outside the tour).
ReplayRuns run_replays(const StageOptions& options);
/// One line describing the workload's lengths (median, mean, p99, max; multimodal count).
std::string describe_workload(const std::vector<Request>& requests);
/// The waste table: one row per system, the vLLM paper's categories plus concurrency.
Table waste_table(const ReplayRuns& runs);
/// Paged at several block sizes: token states and waste per sequence.
Table block_size_table(const ReplayRuns& runs);

/// The prefix-cache workload replayed with prefix caching off and on.
struct PrefixRuns {
  ReplayResult off;  ///< prefix caching off
  ReplayResult on;   ///< prefix caching on
};
/// Runs it.
PrefixRuns run_prefix_replays(const StageOptions& options);
/// Hit rate, prefill tokens saved, memory saved by sharing, concurrency, steps.
Table prefix_table(const PrefixRuns& runs);

/// Parallel sampling: one prompt, `samples` continuations, blocks with and without sharing.
struct SamplingRun {
  int samples = 0;                   ///< n, the samples forked from the prompt
  int prompt_tokens = 0;             ///< the shared prompt's length
  int new_tokens = 0;                ///< tokens each sample generates
  std::int64_t shared_blocks = 0;    ///< physical blocks in use with forks (copy-on-write)
  std::int64_t unshared_blocks = 0;  ///< blocks if every sample had its own copy
  int copies = 0;                    ///< blocks copied on write
};
/// Runs it on a BlockManager with blocks of `block_size`.
SamplingRun run_parallel_sampling(int block_size);

/// Decoding the trained addition model and a random long-context model with the KV cache.
struct DecodeRun {
  std::string checkpoint;                ///< the file served
  int sums = 0;                          ///< held-out sums asked
  int correct = 0;                       ///< right answers (paged cache)
  bool paged_equals_full = false;        ///< the paged cache's answers = the full forward pass's
  bool paged_equals_contiguous = false;  ///< ... = the contiguous cache's
  double max_logit_difference = 0;       ///< paged decode vs full forward, largest |Δ logit|
  int long_prompt = 0;                   ///< the random model's prompt tokens
  int long_new = 0;                      ///< the random model's new tokens
  double cached_seconds = 0;             ///< decoding them with the KV cache
  double recompute_seconds = 0;          ///< decoding them with a full forward pass per token
};
/// Runs it (a smaller long-context run in the tour).
DecodeRun run_decoding(const StageOptions& options);

/// Writes the block-table and copy-on-write pictures (SVG) into `dir`; returns their paths.
std::vector<std::string> write_pictures(const std::string& dir);
/// Writes the replay's memory timeline (CSV) and plots it with gnuplot (PNG) into `dir`; returns
/// what it wrote, or says that gnuplot is missing.
std::string plot_memory(const ReplayRuns& runs, const std::string& dir);

}  // namespace book::kv::stage
