// Reference body of serve.chunked_prefill.
#include "chapters/11_continuous_batching/chunked_prefill.h"

#include <algorithm>

#include "common/check.h"

namespace book::serve {

//! [chunked_prefill]
int chunked_prefill(int remaining, int budget_left, const SchedulerConfig& config) {
  BOOK_CHECK(remaining >= 1,
             "chunked_prefill: remaining must be >= 1 (a request with nothing to prefill "
             "decodes instead), got "
                 << remaining);
  if (budget_left <= 0) return 0;
  if (config.chunked_prefill) return std::min(remaining, budget_left);
  return remaining <= budget_left ? remaining : 0;
}
//! [chunked_prefill]

}  // namespace book::serve
