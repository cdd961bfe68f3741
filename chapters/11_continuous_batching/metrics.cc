#include "chapters/11_continuous_batching/metrics.h"

#include <algorithm>
#include <cmath>

#include "common/check.h"

namespace book::serve {

double RequestTiming::tpot_ms() const {
  return output_tokens > 1 ? (finish_ms - first_token_ms) / (output_tokens - 1) : 0;
}

double percentile(std::vector<double> values, double p) {
  BOOK_CHECK(!values.empty(), "percentile: no values");
  BOOK_CHECK(p > 0 && p <= 100, "percentile: p must be in (0, 100], got " << p);
  std::sort(values.begin(), values.end());
  const auto rank = static_cast<std::size_t>(std::ceil(p / 100 * values.size()));
  return values[std::max<std::size_t>(rank, 1) - 1];
}

ServingSummary summarize(const std::vector<RequestTiming>& timings, const Slo& slo) {
  BOOK_CHECK(!timings.empty(), "summarize: no requests");
  ServingSummary s;
  s.requests = static_cast<int>(timings.size());
  double start = timings[0].arrival_ms, end = 0, tokens = 0;
  int good = 0;
  std::vector<double> ttft, tpot, e2e;
  for (std::size_t i = 0; i < timings.size(); ++i) {
    const RequestTiming& t = timings[i];
    BOOK_CHECK(t.first_token_ms >= t.arrival_ms && t.finish_ms >= t.first_token_ms,
               "summarize: request " << i << " is out of order: arrival " << t.arrival_ms
                                     << " ms, first token " << t.first_token_ms << " ms, finish "
                                     << t.finish_ms << " ms");
    start = std::min(start, t.arrival_ms);
    end = std::max(end, t.finish_ms);
    tokens += t.output_tokens;
    ttft.push_back(t.ttft_ms());
    e2e.push_back(t.e2e_ms());
    if (t.output_tokens > 1) tpot.push_back(t.tpot_ms());
    if (t.ttft_ms() <= slo.ttft_ms && t.tpot_ms() <= slo.tpot_ms) ++good;
  }
  s.duration_s = std::max(end - start, 1e-9) / 1000;
  s.requests_per_s = s.requests / s.duration_s;
  s.tokens_per_s = tokens / s.duration_s;
  s.goodput = good / s.duration_s;
  s.slo_attained = static_cast<double>(good) / s.requests;
  s.ttft_p50 = percentile(ttft, 50), s.ttft_p90 = percentile(ttft, 90);
  s.ttft_p99 = percentile(ttft, 99);
  s.e2e_p50 = percentile(e2e, 50), s.e2e_p90 = percentile(e2e, 90), s.e2e_p99 = percentile(e2e, 99);
  if (!tpot.empty()) {
    s.tpot_p50 = percentile(tpot, 50), s.tpot_p90 = percentile(tpot, 90);
    s.tpot_p99 = percentile(tpot, 99);
  }
  return s;
}

}  // namespace book::serve
