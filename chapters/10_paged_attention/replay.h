/// @file
/// The memory replay: a workload served step by step within a fixed KV budget, by a contiguous
/// server (each request reserves one region up front) or a paged one (blocks on demand, through
/// the real BlockManager), counting where every KV slot goes.
///
/// The serving loop is the simplest one that keeps memory full: first-come first-served
/// admission while the next request fits, one new token per running request per step, a request
/// leaves when it has generated all its tokens. The paged server admits on the prompt's blocks
/// alone, so when its blocks run out mid-decode it preempts the newest running request (frees
/// its blocks; it is recomputed later with its generated tokens as part of its prompt), as vLLM
/// does. Nothing is computed: the replay counts slots, so a 13B model's budget replays in
/// milliseconds. Chapter 11 runs the model in the same loop.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "chapters/10_paged_attention/workload.h"

namespace book::kv {

/// How a contiguous server sizes a request's region (the vLLM paper's three Orca baselines).
enum class Reservation {
  kMaxLength,   ///< the model's whole context, max_len ("Orca (Max)")
  kPowerOfTwo,  ///< the next power of two >= prompt + output, at most max_len ("Orca (Pow2)")
  kExact,       ///< exactly prompt + output, an oracle that knows the output length
};

/// "max length", "power of two", "exact (oracle)".
const char* reservation_name(Reservation reservation);

/// One step's memory, for the plot (tokens of KV slots).
struct MemorySample {
  int step = 0;                ///< model steps so far
  std::int64_t stored = 0;     ///< slots holding a token's K/V (shared blocks counted once)
  std::int64_t allocated = 0;  ///< slots reserved (regions) or in allocated blocks
  int running = 0;             ///< requests in the batch
  int waiting = 0;             ///< requests queued
};

/// Where the budget went, averaged over the steps under load (some request waiting), as fractions
/// of the budget; they sum to 1. The categories of the vLLM paper's Figure 2.
struct MemoryBreakdown {
  double token_states = 0;  ///< K/V of tokens already there: the useful part
  double reserved = 0;      ///< reserved for tokens the request will still generate
  double internal = 0;      ///< reserved but never used (past the request's final length)
  double unallocated = 0;   ///< no request's: holes too small for the next one (external
                            ///< fragmentation), or left while the queue's head does not fit
};

/// What one replay measured.
struct ReplayResult {
  std::string system;                     ///< e.g. "paged, blocks of 16"
  std::int64_t budget_tokens = 0;         ///< KV slots available
  int steps = 0;                          ///< model steps until the last request finished
  int steps_under_load = 0;               ///< of those, steps with a request waiting
  MemoryBreakdown memory;                 ///< under load
  double mean_running = 0;                ///< requests in the batch, mean under load
  int max_running = 0;                    ///< most requests in the batch at once
  double mean_waste_per_sequence = 0;     ///< allocated − stored slots per running request, mean
  int max_waste_per_sequence = 0;         ///< the most any request ever had (paged: < block size)
  std::int64_t preemptions = 0;           ///< requests evicted mid-decode (paged only)
  std::int64_t prompt_tokens = 0;         ///< prompt tokens admitted (recomputation included)
  std::int64_t cached_prompt_tokens = 0;  ///< of those, found in the prefix cache
  std::int64_t queried_blocks = 0;        ///< full prompt blocks looked up in the prefix cache
  std::int64_t hit_blocks = 0;            ///< of those, hits
  double sharing_saving = 0;              ///< 1 − physical / logical blocks, mean under load
  std::vector<MemorySample> timeline;     ///< one sample per step
};

/// Empty when every replay of `results` had a step with a request waiting. Otherwise the sentence
/// that says which did not: its budget held every request at once, so its fractions and its
/// requests at once under load (all 0) mean nothing, and no ratio of them is a result (the kv
/// stage printed "nanx"). The `kv` stage prints it in place of the comparison.
std::string without_pressure(const std::vector<ReplayResult>& results);

/// The paged server's settings.
struct PagedReplayOptions {
  std::int64_t budget_tokens = 16384;  ///< KV slots: budget_tokens / block_size blocks
  int block_size = 16;                 ///< tokens per block
  bool prefix_caching = false;         ///< share full prompt blocks between requests
  int max_running = 256;               ///< most requests per batch (vLLM's max_num_seqs)
};

/// Replays `requests` on a contiguous server with `budget_tokens` slots and context `max_len`.
/// Throws book::Error if the budget is smaller than one request's region (no schedule could serve
/// it), or a request is longer than max_len.
ReplayResult replay_contiguous(const std::vector<Request>& requests, std::int64_t budget_tokens,
                               int max_len, Reservation reservation, int max_running = 256);

/// Replays `requests` on a paged server (a BlockManager of budget_tokens / block_size blocks).
/// Throws book::Error if the block size is < 1, or the budget is smaller than one request
/// (⌈(prompt + output) / block_size⌉ blocks), or holds more blocks than an int counts.
ReplayResult replay_paged(const std::vector<Request>& requests, const PagedReplayOptions& options);

}  // namespace book::kv
