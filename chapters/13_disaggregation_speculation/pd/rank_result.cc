// Putting one run's result together from its ranks. Each rank filled only what it saw, leaving
// the rest at "unset" values that every real value exceeds, so an element-wise maximum over the
// ranks is the merge: one all-reduce through the same Communicator, on threads or MPI processes.
#include <algorithm>

#include "chapters/13_disaggregation_speculation/pd/worker.h"

namespace book::pd {

void merge_over_ranks(coll::Communicator& world, const std::vector<TimedGeneration>& requests,
                      const DecodeStats& stats, PdResult& result) {
  // Per request: first token ms, finish ms, KV bytes, bytes sent, token count, then max_tokens
  // token slots (−1: unset). Doubles hold every count and token id exactly (< 2^53).
  constexpr std::size_t kFields = 5;
  std::size_t size = 1;  // max_inbox first
  for (const TimedGeneration& g : requests)
    size += kFields + static_cast<std::size_t>(g.request.max_tokens);
  std::vector<double> flat(size, -1.0);
  flat[0] = static_cast<double>(stats.max_inbox);
  std::size_t at = 1;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const auto& tokens = result.tokens[i];
    flat[at + 0] = result.timings[i].first_token_ms;
    flat[at + 1] = result.timings[i].finish_ms;
    flat[at + 2] = static_cast<double>(result.kv_bytes[i]);
    flat[at + 3] = static_cast<double>(result.bytes_sent[i]);
    flat[at + 4] = static_cast<double>(tokens.size());
    std::copy(tokens.begin(), tokens.end(), flat.begin() + at + kFields);
    at += kFields + static_cast<std::size_t>(requests[i].request.max_tokens);
  }
  world.all_reduce(coll::Buffer(std::span<double>(flat)), coll::ReduceOp::kMax);
  result.max_inbox = static_cast<std::int64_t>(flat[0]);
  at = 1;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    result.timings[i].first_token_ms = flat[at + 0];
    result.timings[i].finish_ms = flat[at + 1];
    result.kv_bytes[i] = static_cast<std::int64_t>(flat[at + 2]);
    result.bytes_sent[i] = static_cast<std::int64_t>(flat[at + 3]);
    const auto count = static_cast<std::size_t>(flat[at + 4]);
    result.tokens[i].resize(count);
    for (std::size_t t = 0; t < count; ++t)
      result.tokens[i][t] = static_cast<int>(flat[at + kFields + t]);
    at += kFields + static_cast<std::size_t>(requests[i].request.max_tokens);
  }
  // The counters each decode worker kept: summed over the pool.
  std::vector<double> sums{static_cast<double>(stats.admit_retries),
                           static_cast<double>(stats.preemptions),
                           static_cast<double>(stats.prefix_hits)};
  world.all_reduce(coll::Buffer(std::span<double>(sums)), coll::ReduceOp::kSum);
  result.admit_retries = static_cast<std::int64_t>(sums[0]);
  result.decode_preemptions = static_cast<std::int64_t>(sums[1]);
  result.decode_prefix_hits = static_cast<std::int64_t>(sums[2]);
}

}  // namespace book::pd
