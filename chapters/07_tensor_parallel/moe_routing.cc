#include "chapters/07_tensor_parallel/moe_routing.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "common/check.h"

namespace book::ep {

void MoeConfig::validate() const {
  BOOK_CHECK(d_model >= 1 && d_hidden >= 1,
             "MoeConfig: d_model " << d_model << " and d_hidden " << d_hidden << " must be >= 1");
  BOOK_CHECK(experts >= 1, "MoeConfig: " << experts << " experts; need at least one");
  BOOK_CHECK(top_k >= 1 && top_k <= experts,
             "MoeConfig: top_k " << top_k << " must be between 1 and the " << experts
                                 << " experts (a token cannot visit an expert twice)");
  BOOK_CHECK(capacity_factor > 0 && std::isfinite(capacity_factor),
             "MoeConfig: capacity_factor " << capacity_factor
                                           << " must be positive and finite (1.0 is an even "
                                              "split; 1.25 is usual)");
  BOOK_CHECK(aux_loss_weight >= 0 && std::isfinite(aux_loss_weight),
             "MoeConfig: aux_loss_weight " << aux_loss_weight
                                           << " must be >= 0 and finite (Switch uses 0.01)");
}

int MoeConfig::capacity(int tokens) const {
  const double even = static_cast<double>(top_k) * tokens / experts;
  // Clamped in double before the cast: a huge factor would not fit an int (undefined), and no
  // expert can be offered more than the tokens·k choices there are.
  const double all_choices = static_cast<double>(top_k) * tokens;
  const double slots = std::min(std::ceil(capacity_factor * even - 1e-9), all_choices);
  return std::max(1, static_cast<int>(slots));
}

void ExpertPlacement::validate() const {
  BOOK_CHECK(ranks >= 1 && rank >= 0 && rank < ranks,
             "ExpertPlacement: rank " << rank << " of " << ranks << " ranks");
  BOOK_CHECK(ranks <= experts,
             "ExpertPlacement: " << ranks << " expert-parallel ranks for " << experts
                                 << " experts would leave a rank without an "
                                    "expert; use at most as many ranks as experts");
  BOOK_CHECK(experts % ranks == 0,
             "ExpertPlacement: " << experts << " experts cannot be spread evenly over " << ranks
                                 << " ranks; use a number of ranks that "
                                    "divides the experts");
}

void check_dispatch(const Routing& routing, const ExpertPlacement& placement, int comm_size,
                    int comm_rank) {
  placement.validate();
  BOOK_CHECK(placement.experts == routing.experts,
             "dispatch: the placement spreads " << placement.experts << " experts but the routing"
                                                << " chose among " << routing.experts
                                                << ": build both from the same MoeConfig");
  BOOK_CHECK(placement.ranks == comm_size && placement.rank == comm_rank,
             "dispatch: the placement is rank " << placement.rank << " of " << placement.ranks
                                                << " but the communicator is rank " << comm_rank
                                                << " of " << comm_size
                                                << ": pass the expert-parallel group's size and "
                                                   "rank");
  const std::size_t choices = static_cast<std::size_t>(routing.tokens) * routing.top_k;
  BOOK_CHECK(routing.tokens >= 0 && routing.top_k >= 1 && routing.expert.size() == choices &&
                 routing.slot.size() == choices &&
                 routing.load.size() == static_cast<std::size_t>(routing.experts),
             "dispatch: the routing of " << routing.tokens << " tokens, top_k " << routing.top_k
                                         << " has " << routing.expert.size() << " experts, "
                                         << routing.slot.size() << " slots and "
                                         << routing.load.size() << " loads: use route()'s result");
}

template <typename T>
Routing route(const T* probs, int tokens, const MoeConfig& config) {
  config.validate();
  BOOK_CHECK(tokens >= 1, "route: " << tokens << " tokens; need at least one");
  const int k = config.top_k, e_count = config.experts;
  Routing r;
  r.tokens = tokens;
  r.top_k = k;
  r.experts = e_count;
  r.capacity = config.capacity(tokens);
  r.expert.assign(static_cast<std::size_t>(tokens) * k, -1);
  r.slot.assign(r.expert.size(), -1);
  r.load.assign(e_count, 0);
  r.assigned.assign(e_count, 0);
  std::vector<int> order(e_count);
  for (int n = 0; n < tokens; ++n) {
    const T* p = probs + static_cast<std::size_t>(n) * e_count;
    std::iota(order.begin(), order.end(), 0);
    // The k most probable, highest first; equal probabilities go to the lower expert index.
    std::partial_sort(order.begin(), order.begin() + k, order.end(),
                      [&](int a, int b) { return p[a] > p[b] || (p[a] == p[b] && a < b); });
    for (int i = 0; i < k; ++i) {
      r.expert[static_cast<std::size_t>(n) * k + i] = order[i];
      ++r.assigned[order[i]];
    }
  }
  //! [capacity]
  // Slots by priority: every token's first choice, then every second choice, ...
  for (int i = 0; i < k; ++i)
    for (int n = 0; n < tokens; ++n) {
      const std::size_t choice = static_cast<std::size_t>(n) * k + i;
      const int e = r.expert[choice];
      if (r.load[e] < r.capacity)
        r.slot[choice] = r.load[e]++;
      else
        ++r.dropped;  // over capacity: this choice's output is 0, the residual carries the token
    }
  //! [capacity]
  return r;
}

template <typename T>
double load_balancing_loss(const T* probs, const Routing& routing, double aux_loss_weight) {
  const int e_count = routing.experts, n = routing.tokens;
  double loss = 0;
  for (int e = 0; e < e_count; ++e) {
    const double f =
        static_cast<double>(routing.assigned[e]) / (static_cast<double>(n) * routing.top_k);
    double mean_p = 0;
    for (int i = 0; i < n; ++i) mean_p += probs[static_cast<std::size_t>(i) * e_count + e];
    loss += f * mean_p / n;
  }
  return aux_loss_weight * e_count * loss;
}

template Routing route<float>(const float*, int, const MoeConfig&);
template Routing route<double>(const double*, int, const MoeConfig&);
template double load_balancing_loss<float>(const float*, const Routing&, double);
template double load_balancing_loss<double>(const double*, const Routing&, double);

}  // namespace book::ep
