#include "chapters/10_paged_attention/workload.h"

#include <algorithm>
#include <cmath>

#include "common/check.h"
#include "common/rng.h"

namespace book::kv {
namespace {

int log_normal(Rng& rng, double median, double sigma, int lo, int hi) {
  const double value = median * std::exp(sigma * rng.normal());
  return static_cast<int>(
      std::clamp(std::lround(value), static_cast<long>(lo), static_cast<long>(hi)));
}

std::vector<int> random_tokens(Rng& rng, int count, int vocab) {
  std::vector<int> tokens(count);
  for (int& t : tokens) t = static_cast<int>(rng.uniform_int(0, vocab - 1));
  return tokens;
}

}  // namespace

std::vector<Request> make_workload(const WorkloadOptions& o) {
  BOOK_CHECK(o.requests >= 1, "make_workload: needs at least 1 request, got " << o.requests);
  BOOK_CHECK(o.max_len >= 2,
             "make_workload: max_len must be >= 2 (a prompt token and an output "
             "token), got "
                 << o.max_len);
  BOOK_CHECK(o.prompt_median >= 1 && o.output_median >= 1 && o.sigma >= 0,
             "make_workload: medians must be >= 1 and sigma >= 0, got "
                 << o.prompt_median << ", " << o.output_median << ", " << o.sigma);
  BOOK_CHECK(o.multimodal_fraction >= 0 && o.multimodal_fraction <= 1 && o.image_tokens >= 1,
             "make_workload: multimodal_fraction must be in [0, 1] and image_tokens >= 1");
  BOOK_CHECK(o.vocab >= 2, "make_workload: vocab must be >= 2, got " << o.vocab);
  BOOK_CHECK(
      o.system_prompts >= 0 && (o.system_prompts == 0 || (o.system_prompt_tokens >= 1 &&
                                                          o.system_prompt_tokens + 2 <= o.max_len)),
      "make_workload: " << o.system_prompts << " system prompts of " << o.system_prompt_tokens
                        << " tokens leave no room in max_len " << o.max_len);
  Rng rng(o.seed);
  std::vector<std::vector<int>> system(o.system_prompts);
  for (auto& s : system) s = random_tokens(rng, o.system_prompt_tokens, o.vocab);
  std::vector<Request> requests(o.requests);
  for (int i = 0; i < o.requests; ++i) {
    Request& r = requests[i];
    r.id = i;
    std::vector<int> prefix;
    if (o.system_prompts > 0) {
      r.system_prompt = i % o.system_prompts;
      prefix = system[r.system_prompt];
    }
    const int room = o.max_len - static_cast<int>(prefix.size());  // for the own prompt + output
    int own;
    r.multimodal = rng.uniform() < o.multimodal_fraction;
    if (r.multimodal)  // two or three images and a short question
      own = static_cast<int>(rng.uniform_int(2, 3)) * o.image_tokens +
            log_normal(rng, 30, 0.5, 1, room);
    else
      own = log_normal(rng, o.prompt_median, o.sigma, 1, room);
    own = std::min(own, room - 1);
    r.output_tokens = log_normal(rng, o.output_median, o.sigma, 1, room - own);
    r.prompt = prefix;
    const auto tail = random_tokens(rng, own, o.vocab);
    r.prompt.insert(r.prompt.end(), tail.begin(), tail.end());
  }
  return requests;
}

}  // namespace book::kv
