// The MoE layer's router, experts and backward pass; the all-to-alls are the exercise
// ep.dispatch_combine (expert_dispatch.h), called here when the layer has a group.
#include "chapters/07_tensor_parallel/moe_layer.h"

#include <algorithm>
#include <cmath>

#include "chapters/04_training_baseline/layers.h"
#include "common/check.h"
#include "common/rng.h"

namespace book::ep {
namespace {

ExpertPlacement checked(const MoeConfig& config, ExpertPlacement placement,
                        const coll::Communicator* comm) {
  config.validate();
  BOOK_CHECK(placement.experts == config.experts,
             "MoeLayer: the placement spreads " << placement.experts
                                                << " experts but the layer has " << config.experts);
  placement.validate();
  if (comm == nullptr)
    BOOK_CHECK(placement.ranks == 1,
               "MoeLayer: " << placement.ranks << " expert-parallel ranks need a Communicator");
  else
    BOOK_CHECK(comm->size() == placement.ranks && comm->rank() == placement.rank,
               "MoeLayer: the group is rank " << comm->rank() << " of " << comm->size()
                                              << " but the placement is rank " << placement.rank
                                              << " of " << placement.ranks);
  return placement;
}

// Row i of a [rows, width] buffer.
template <typename T>
T* row(std::vector<T>& buffer, std::size_t i, std::size_t width) {
  return buffer.data() + i * width;
}

}  // namespace

template <typename T>
MoeLayer<T>::MoeLayer(const MoeConfig& config, const ExpertPlacement& placement,
                      coll::Communicator* comm)
    : config_(config), placement_(checked(config, placement, comm)), comm_(comm) {
  const std::size_t total = router_size() + placement_.per_rank() * expert_size();
  params_.assign(total, T(0));
  grads_.assign(total, T(0));
}

template <typename T>
std::size_t MoeLayer<T>::router_size() const {
  return static_cast<std::size_t>(config_.d_model) * config_.experts;
}

template <typename T>
std::size_t MoeLayer<T>::expert_size() const {
  const std::size_t c = config_.d_model, f = config_.d_hidden;
  return 2 * c * f + f + c;
}

template <typename T>
std::size_t MoeLayer<T>::expert_offset(int local_expert) const {
  BOOK_CHECK(local_expert >= 0 && local_expert < placement_.per_rank(),
             "MoeLayer: local expert " << local_expert << " of " << placement_.per_rank());
  return router_size() + static_cast<std::size_t>(local_expert) * expert_size();
}

template <typename T>
void MoeLayer<T>::zero_grad() {
  std::fill(grads_.begin(), grads_.end(), T(0));
}

template <typename T>
void MoeLayer<T>::init(std::uint64_t seed, double scale) {
  Rng router_rng(seed);
  for (std::size_t i = 0; i < router_size(); ++i)
    params_[i] = static_cast<T>(router_rng.uniform(-scale, scale));
  const std::size_t c = config_.d_model, f = config_.d_hidden;
  for (int j = 0; j < placement_.per_rank(); ++j) {
    // Expert e draws from its own stream, so every placement holds the same experts.
    Rng rng(seed + 1 + static_cast<std::uint64_t>(placement_.first() + j));
    T* p = params_.data() + expert_offset(j);
    for (std::size_t i = 0; i < expert_size(); ++i) {
      const bool bias = (i >= c * f && i < c * f + f) || i >= 2 * c * f + f;
      p[i] = static_cast<T>(rng.uniform(-scale, scale) * (bias ? 0.5 : 1.0));
    }
  }
}

//! [moe_forward]
template <typename T>
MoeStats MoeLayer<T>::forward(const T* x, int tokens, T* y) {
  BOOK_CHECK(tokens >= 1, "MoeLayer::forward: " << tokens << " tokens; need at least one");
  const int c = config_.d_model, e_count = config_.experts, k = config_.top_k;
  x_ = x;
  tokens_ = tokens;
  // The router: probabilities over the experts for each token.
  probs_.resize(static_cast<std::size_t>(tokens) * e_count);
  train::linear_forward(x, tokens, c, params_.data(), e_count, static_cast<const T*>(nullptr),
                        e_count, probs_.data(), e_count);
  for (int n = 0; n < tokens; ++n) {
    T* p = row(probs_, n, e_count);
    const T top = *std::max_element(p, p + e_count);
    T sum = 0;
    for (int e = 0; e < e_count; ++e) sum += (p[e] = std::exp(p[e] - top));
    for (int e = 0; e < e_count; ++e) p[e] /= sum;
  }
  routing_ = route(probs_.data(), tokens, config_);
  gates_.resize(routing_.expert.size());
  for (std::size_t choice = 0; choice < gates_.size(); ++choice)
    gates_[choice] = probs_[(choice / k) * e_count + routing_.expert[choice]];

  // To the experts, through them, and back.
  std::fill(y, y + static_cast<std::size_t>(tokens) * c, T(0));
  if (comm_ != nullptr) {
    dispatch(x, c, routing_, placement_, *comm_, plan_, received_);
    experts_forward();
    combine(out_back_.data(), c, routing_, gates_.data(), plan_, *comm_, returned_, y);
  } else {
    // One rank: send order is expert-major already, and nothing moves.
    plan_.send_rows = plan_.recv_rows = {static_cast<std::size_t>(routing_.kept())};
    plan_.recv_per_expert.assign(routing_.load.begin(), routing_.load.end());
    std::vector<std::size_t> first(e_count + 1, 0);
    for (int e = 0; e < e_count; ++e) first[e + 1] = first[e] + routing_.load[e];
    plan_.order.assign(first.back(), -1);
    for (std::size_t choice = 0; choice < routing_.slot.size(); ++choice)
      if (routing_.slot[choice] >= 0)
        plan_.order[first[routing_.expert[choice]] + routing_.slot[choice]] =
            static_cast<int>(choice);
    received_.resize(plan_.order.size() * c);
    for (std::size_t r = 0; r < plan_.order.size(); ++r)
      std::copy(x + static_cast<std::size_t>(plan_.order[r] / k) * c,
                x + static_cast<std::size_t>(plan_.order[r] / k + 1) * c, row(received_, r, c));
    experts_forward();
    returned_ = out_back_;
    for (std::size_t r = 0; r < plan_.order.size(); ++r) {
      const int choice = plan_.order[r];
      T* out = y + static_cast<std::size_t>(choice / k) * c;
      for (int i = 0; i < c; ++i) out[i] += gates_[choice] * returned_[r * c + i];
    }
  }
  //! [moe_forward]

  MoeStats stats;
  stats.aux_loss = load_balancing_loss(probs_.data(), routing_, config_.aux_loss_weight);
  stats.tokens = tokens;
  stats.capacity = routing_.capacity;
  stats.kept = routing_.kept();
  stats.dropped = routing_.dropped;
  stats.load = routing_.load;
  stats.rows_sent = plan_.rows_sent();
  stats.rows_received = plan_.rows_received();
  stats.rows_to_others = stats.rows_sent - plan_.send_rows[comm_ ? placement_.rank : 0];
  return stats;
}

// Source-major (rows as received: source by source, expert by expert) <-> expert-major (expert by
// expert, source by source), the order in which each expert's rows are contiguous.
template <typename T>
void MoeLayer<T>::permute(const std::vector<T>& from, std::vector<T>& to, bool to_expert) const {
  const int sources = static_cast<int>(plan_.recv_rows.size()), per_rank = placement_.per_rank();
  const std::size_t c = config_.d_model;
  to.resize(from.size());
  std::vector<std::size_t> expert_start(per_rank + 1, 0);
  for (int j = 0; j < per_rank; ++j) {
    expert_start[j + 1] = expert_start[j];
    for (int s = 0; s < sources; ++s)
      expert_start[j + 1] += plan_.recv_per_expert[s * per_rank + j];
  }
  std::size_t source_row = 0;
  std::vector<std::size_t> expert_row(expert_start.begin(), expert_start.end() - 1);
  for (int s = 0; s < sources; ++s)
    for (int j = 0; j < per_rank; ++j)
      for (std::size_t i = 0; i < plan_.recv_per_expert[s * per_rank + j]; ++i) {
        const std::size_t src = to_expert ? source_row : expert_row[j];
        const std::size_t dst = to_expert ? expert_row[j] : source_row;
        std::copy(from.begin() + src * c, from.begin() + (src + 1) * c, to.begin() + dst * c);
        ++source_row;
        ++expert_row[j];
      }
}

template <typename T>
void MoeLayer<T>::experts_forward() {
  const int c = config_.d_model, f = config_.d_hidden, per_rank = placement_.per_rank();
  permute(received_, expert_in_, true);
  const std::size_t rows = expert_in_.size() / c;
  fc_.resize(rows * f);
  fc_gelu_.resize(rows * f);
  expert_out_.resize(rows * c);
  std::size_t first = 0;
  for (int j = 0; j < per_rank; ++j) {
    int count = 0;
    for (std::size_t s = 0; s < plan_.recv_rows.size(); ++s)
      count += static_cast<int>(plan_.recv_per_expert[s * per_rank + j]);
    if (count > 0) {  // an expert nobody chose does no work
      const T* p = params_.data() + expert_offset(j);
      const T *w_fc = p, *b_fc = p + c * f, *w_proj = b_fc + f, *b_proj = w_proj + f * c;
      train::linear_forward(row(expert_in_, first, c), count, c, w_fc, f, b_fc, f,
                            row(fc_, first, f), f);
      train::gelu_forward(row(fc_, first, f), static_cast<std::size_t>(count) * f,
                          row(fc_gelu_, first, f));
      train::linear_forward(row(fc_gelu_, first, f), count, f, w_proj, c, b_proj, c,
                            row(expert_out_, first, c), c);
    }
    first += count;
  }
  permute(expert_out_, out_back_, false);
}

template <typename T>
void MoeLayer<T>::exchange(const std::vector<T>& out, std::vector<T>& in, bool forward_direction) {
  if (comm_ == nullptr) {
    in = out;
    return;
  }
  const std::size_t c = config_.d_model;
  const auto& sent = forward_direction ? plan_.send_rows : plan_.recv_rows;
  const auto& got = forward_direction ? plan_.recv_rows : plan_.send_rows;
  std::vector<std::size_t> send_counts(sent.size()), recv_counts(got.size());
  std::size_t total = 0;
  for (std::size_t r = 0; r < sent.size(); ++r) {
    send_counts[r] = sent[r] * c;
    recv_counts[r] = got[r] * c;
    total += recv_counts[r];
  }
  in.resize(total);
  comm_->all_to_all(std::span<const T>(out), send_counts, std::span<T>(in), recv_counts);
}

template <typename T>
void MoeLayer<T>::experts_backward() {
  // received_ holds the experts' output gradients (source-major) on entry and their input
  // gradients (source-major) on exit.
  const int c = config_.d_model, f = config_.d_hidden, per_rank = placement_.per_rank();
  std::vector<T> d_out, d_in, d_gelu, d_fc;
  permute(received_, d_out, true);
  const std::size_t rows = d_out.size() / c;
  d_in.assign(rows * c, T(0));
  d_gelu.assign(rows * f, T(0));
  d_fc.assign(rows * f, T(0));
  std::size_t first = 0;
  for (int j = 0; j < per_rank; ++j) {
    int count = 0;
    for (std::size_t s = 0; s < plan_.recv_rows.size(); ++s)
      count += static_cast<int>(plan_.recv_per_expert[s * per_rank + j]);
    if (count > 0) {
      const T* p = params_.data() + expert_offset(j);
      T* g = grads_.data() + expert_offset(j);
      const T *w_fc = p, *w_proj = p + c * f + f;
      T *g_w_fc = g, *g_b_fc = g + c * f, *g_w_proj = g_b_fc + f, *g_b_proj = g_w_proj + f * c;
      train::linear_backward(row(d_out, first, c), c, row(fc_gelu_, first, f), count, f, w_proj, c,
                             c, row(d_gelu, first, f), g_w_proj, g_b_proj);
      train::gelu_backward(row(d_gelu, first, f), row(fc_, first, f),
                           static_cast<std::size_t>(count) * f, row(d_fc, first, f));
      train::linear_backward(row(d_fc, first, f), f, row(expert_in_, first, c), count, c, w_fc, f,
                             f, row(d_in, first, c), g_w_fc, g_b_fc);
    }
    first += count;
  }
  permute(d_in, received_, false);
}

template <typename T>
void MoeLayer<T>::backward(const T* dy, T* dx) {
  BOOK_CHECK(x_ != nullptr, "MoeLayer::backward: no forward() has run");
  const int c = config_.d_model, e_count = config_.experts, k = config_.top_k, n = tokens_;
  // Through the combine: each returned row was scaled by its gate.
  std::vector<T> d_returned(returned_.size()), d_gates(gates_.size(), T(0));
  for (std::size_t r = 0; r < plan_.order.size(); ++r) {
    const int choice = plan_.order[r];
    const T* d = dy + static_cast<std::size_t>(choice / k) * c;
    T dot = 0;
    for (int i = 0; i < c; ++i) {
      d_returned[r * c + i] = gates_[choice] * d[i];
      dot += d[i] * returned_[r * c + i];
    }
    d_gates[choice] = dot;
  }
  // The gradients travel the routes of the forward pass, to the experts and back.
  exchange(d_returned, received_, true);
  experts_backward();
  std::vector<T> d_sent;
  exchange(received_, d_sent, false);
  std::fill(dx, dx + static_cast<std::size_t>(n) * c, T(0));
  for (std::size_t r = 0; r < plan_.order.size(); ++r) {
    T* d = dx + static_cast<std::size_t>(plan_.order[r] / k) * c;
    for (int i = 0; i < c; ++i) d[i] += d_sent[r * c + i];
  }
  //! [router_backward]
  // The router: the gates' gradients, plus the load-balancing loss's α·E·f_e/N on every
  // probability, then back through the softmax.
  std::vector<T> d_logits(probs_.size());
  for (int t = 0; t < n; ++t) {
    const T* p = probs_.data() + static_cast<std::size_t>(t) * e_count;
    T* d = d_logits.data() + static_cast<std::size_t>(t) * e_count;
    for (int e = 0; e < e_count; ++e)
      d[e] = static_cast<T>(config_.aux_loss_weight * e_count * routing_.assigned[e] /
                            (static_cast<double>(n) * k) / n);
    for (int i = 0; i < k; ++i) {
      const std::size_t choice = static_cast<std::size_t>(t) * k + i;
      if (routing_.slot[choice] >= 0) d[routing_.expert[choice]] += d_gates[choice];
    }
    T dot = 0;
    for (int e = 0; e < e_count; ++e) dot += p[e] * d[e];
    for (int e = 0; e < e_count; ++e) d[e] = p[e] * (d[e] - dot);
  }
  train::linear_backward(d_logits.data(), e_count, x_, n, c, params_.data(), e_count, e_count, dx,
                         grads_.data(), static_cast<T*>(nullptr));
  //! [router_backward]
}

template class MoeLayer<float>;
template class MoeLayer<double>;

}  // namespace book::ep
