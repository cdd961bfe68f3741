/// @file
/// When requests arrive: a seeded Poisson process, or a burstier Gamma one, over chapter 10's
/// long-tailed prompt and output lengths (workload.h).
#pragma once

#include <cstdint>
#include <vector>

#include "chapters/10_paged_attention/workload.h"

namespace book::serve {

/// One request of a timed workload.
struct TimedRequest {
  int id = 0;             ///< position in arrival order
  double arrival_ms = 0;  ///< when it arrives
  int prompt_tokens = 0;  ///< its prompt's length
  int output_tokens = 1;  ///< tokens it generates (max_tokens; no stop token in the replay)
};

/// The arrival process.
struct ArrivalOptions {
  double rate = 4;          ///< requests per second, on average
  double gamma_shape = 1;   ///< gaps ~ Gamma(shape, 1 / (shape · rate)): 1 is Poisson, < 1 bursty
  std::uint64_t seed = 11;  ///< the gaps' seed (the lengths have the workload's own)
};

/// Chapter 10's ShareGPT-like lengths (make_workload's defaults: log-normal, sigma 1, medians 100
/// and 200 tokens, 2% prompts of 2 or 3 images of 576 tokens, a 2048-token context) scaled by
/// context / 2048 to a model of `context` positions, with token ids in [0, vocab): the same long
/// tail on a small model (the stage's wall-clock section, context 256: medians 12.5 and 25).
/// Throws book::Error (make_workload's checks) if context or vocab is too small.
kv::WorkloadOptions scaled_lengths(int requests, std::uint64_t seed, int context, int vocab);

/// The requests of `lengths` (chapter 10's make_workload) with arrival times from `options`:
/// the same seed gives the same times. Throws book::Error if rate or gamma_shape is not finite and
/// > 0.
std::vector<TimedRequest> with_arrivals(const std::vector<kv::Request>& lengths,
                                        const ArrivalOptions& options);

}  // namespace book::serve
