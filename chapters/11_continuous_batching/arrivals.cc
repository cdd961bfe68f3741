#include "chapters/11_continuous_batching/arrivals.h"

#include <algorithm>
#include <cmath>

#include "common/check.h"
#include "common/rng.h"

namespace book::serve {
namespace {

// Gamma(shape, 1) by Marsaglia and Tsang (shape < 1 through the boost u^(1/shape)).
double gamma_unit(Rng& rng, double shape) {
  if (shape < 1) return gamma_unit(rng, shape + 1) * std::pow(1 - rng.uniform(), 1 / shape);
  const double d = shape - 1.0 / 3, c = 1 / std::sqrt(9 * d);
  for (;;) {
    const double x = rng.normal(), v0 = 1 + c * x;
    if (v0 <= 0) continue;
    const double v = v0 * v0 * v0, u = 1 - rng.uniform();
    if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v;
  }
}

}  // namespace

std::vector<TimedRequest> with_arrivals(const std::vector<kv::Request>& lengths,
                                        const ArrivalOptions& options) {
  // Infinite values are refused too: an infinite shape makes the gamma sampler compare against
  // NaN, which never accepts, and loops forever.
  BOOK_CHECK(std::isfinite(options.rate) && options.rate > 0,
             "with_arrivals: rate must be finite and > 0 requests/s, got " << options.rate);
  BOOK_CHECK(std::isfinite(options.gamma_shape) && options.gamma_shape > 0,
             "with_arrivals: gamma_shape must be finite and > 0 (1 is Poisson), got "
                 << options.gamma_shape);
  Rng rng(options.seed);
  std::vector<TimedRequest> out;
  double now_ms = 0;
  for (const kv::Request& request : lengths) {
    TimedRequest timed;
    timed.id = static_cast<int>(out.size());
    timed.arrival_ms = now_ms;
    timed.prompt_tokens = static_cast<int>(request.prompt.size());
    timed.output_tokens = request.output_tokens;
    out.push_back(timed);
    // Mean gap 1000 / rate ms; the shape sets the burstiness (coefficient of variation 1/√shape).
    now_ms += gamma_unit(rng, options.gamma_shape) / options.gamma_shape * 1000 / options.rate;
  }
  return out;
}

kv::WorkloadOptions scaled_lengths(int requests, std::uint64_t seed, int context, int vocab) {
  kv::WorkloadOptions w;
  const double scale = static_cast<double>(context) / w.max_len;
  BOOK_CHECK(context >= 16 && context <= w.max_len,
             "scaled_lengths: context must be in [16, " << w.max_len << "], got " << context);
  w.requests = requests;
  w.seed = seed;
  w.max_len = context;
  w.prompt_median *= scale;
  w.output_median *= scale;
  w.image_tokens = std::max(1, static_cast<int>(std::lround(w.image_tokens * scale)));
  w.vocab = vocab;
  return w;
}

}  // namespace book::serve
