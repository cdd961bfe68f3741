// The reference bodies of spec.verify_greedy, spec.rejection_sample and spec.expected_tokens.
#include "chapters/13_disaggregation_speculation/speculative.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "common/check.h"

namespace book::spec {
namespace {

int argmax_row(std::span<const float> row) {
  return static_cast<int>(std::max_element(row.begin(), row.end()) - row.begin());
}

}  // namespace

//! [verify_greedy]
GreedyVerdict verify_greedy(std::span<const int> draft, std::span<const float> target_logits,
                            int vocab) {
  BOOK_CHECK(!draft.empty(), "verify_greedy: no draft tokens (gamma must be >= 1)");
  BOOK_CHECK(vocab >= 1, "verify_greedy: vocab must be >= 1, got " << vocab);
  const std::size_t rows = draft.size() + 1;
  BOOK_CHECK(target_logits.size() == rows * static_cast<std::size_t>(vocab),
             "verify_greedy: " << draft.size() << " draft tokens need " << rows << " rows of "
                               << vocab << " logits, got " << target_logits.size() << " values");
  for (std::size_t i = 0; i < draft.size(); ++i)
    BOOK_CHECK(draft[i] >= 0 && draft[i] < vocab, "verify_greedy: draft token "
                                                      << i << " = " << draft[i]
                                                      << " is outside [0, " << vocab << ")");
  GreedyVerdict verdict;
  // Row i is what the target would have said at draft[i]'s position: the first disagreement
  // ends the run, and the target's own token replaces the draft's there.
  while (verdict.accepted < static_cast<int>(draft.size()) &&
         argmax_row(target_logits.subspan(verdict.accepted * vocab, vocab)) ==
             draft[verdict.accepted])
    ++verdict.accepted;
  verdict.next_token = argmax_row(target_logits.subspan(verdict.accepted * vocab, vocab));
  return verdict;
}
//! [verify_greedy]

//! [rejection_sample]
SampleVerdict rejection_sample(std::span<const double> p, std::span<const double> q,
                               int draft_token, double u_accept, double u_residual) {
  check_distribution(p, "rejection_sample: p (target)");
  check_distribution(q, "rejection_sample: q (draft)");
  BOOK_CHECK(p.size() == q.size(),
             "rejection_sample: p has " << p.size() << " entries, q has " << q.size());
  BOOK_CHECK(
      draft_token >= 0 && draft_token < static_cast<int>(q.size()),
      "rejection_sample: draft token " << draft_token << " is outside [0, " << q.size() << ")");
  BOOK_CHECK(q[draft_token] > 0,
             "rejection_sample: the draft proposed token " << draft_token << " but gave it q = 0");
  BOOK_CHECK(
      u_accept >= 0 && u_accept < 1 && u_residual >= 0 && u_residual < 1,
      "rejection_sample: uniforms must be in [0, 1), got " << u_accept << " and " << u_residual);
  // Keeping x with probability min(1, p/q) gives min(p, q) of mass to every token; the residual
  // gives back exactly the missing p − min(p, q) = max(0, p − q).
  if (u_accept < std::min(1.0, p[draft_token] / q[draft_token])) return {true, draft_token};
  std::vector<double> residual(p.size());
  double sum = 0;
  for (std::size_t i = 0; i < p.size(); ++i) sum += residual[i] = std::max(0.0, p[i] - q[i]);
  if (sum <= 0) return {false, sample_index(p, u_residual)};
  for (double& r : residual) r /= sum;
  residual.back() += 1.0 - [&] {  // make it sum to 1 within rounding for sample_index's check
    double s = 0;
    for (const double r : residual) s += r;
    return s;
  }();
  if (residual.back() < 0) residual.back() = 0;
  return {false, sample_index(residual, u_residual)};
}
//! [rejection_sample]

//! [expected_tokens]
double expected_tokens(double alpha, int gamma) {
  BOOK_CHECK(alpha >= 0 && alpha <= 1, "expected_tokens: alpha must be in [0, 1], got " << alpha);
  BOOK_CHECK(gamma >= 1, "expected_tokens: gamma must be >= 1, got " << gamma);
  if (alpha == 1) return gamma + 1;  // every proposal kept, plus the bonus token
  return (1 - std::pow(alpha, gamma + 1)) / (1 - alpha);
}
//! [expected_tokens]

}  // namespace book::spec
