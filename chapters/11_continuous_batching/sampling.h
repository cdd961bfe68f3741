/// @file
/// Sampling the next token: greedy, or temperature with top-k and top-p (nucleus) truncation,
/// from a per-request seed. The random number of a request's k-th token is a pure function of
/// (seed, k), so a request samples the same tokens whatever else runs beside it, and after a
/// preemption it continues the same stream.
#pragma once

#include <cstdint>
#include <span>

namespace book::serve {

/// How a request picks its tokens.
struct SamplingParams {
  double temperature = 0;  ///< 0: greedy (the largest logit); > 0: softmax(logits / temperature)
  int top_k = 0;           ///< keep the k most likely tokens (0: all)
  double top_p = 1.0;      ///< then the fewest most-likely tokens whose mass reaches top_p
  std::uint64_t seed = 0;  ///< the request's random stream
};

/// Throws book::Error naming the value unless temperature >= 0, top_k >= 0 and 0 < top_p <= 1.
void check_sampling(const SamplingParams& params);

/// The uniform number in [0, 1) that picks token number `index` of a request seeded `seed`
/// (a splitmix64 hash of both: no state to carry across steps or preemptions).
double sampling_uniform(std::uint64_t seed, std::int64_t index);

/// Exercise serve.sample_top_p: the token that `uniform` picks from `logits` under `params`.
/// Temperature 0: the index of the largest logit (the first on ties), whatever the rest. Else:
/// probabilities p_i = softmax(logits / temperature) in double; order the tokens by p descending
/// (lower index first on ties); keep the first top_k (if top_k > 0); then keep the shortest
/// prefix of those whose summed probability reaches top_p × (their total); renormalise what is
/// kept and return the first token whose cumulative probability exceeds `uniform`. Throws
/// book::Error if logits is empty, a parameter is out of range (check_sampling) or uniform is not
/// in [0, 1).
/// \exercise{serve.sample_top_p}
int sample_top_p(std::span<const float> logits, const SamplingParams& params, double uniform);

}  // namespace book::serve
