// The stage's expert-parallel runs: the MoE layer on 1, 2, 4, ... thread ranks with its all-to-all
// bytes counted, and a skewed router trained on the load-balancing loss alone.
#include <algorithm>
#include <cmath>
#include <vector>

#include "chapters/03_collectives/threads.h"
#include "chapters/07_tensor_parallel/moe_layer.h"
#include "chapters/07_tensor_parallel/tp_stage.h"
#include "common/rng.h"

namespace book::ep {
namespace {

MoeConfig stage_moe(const tp::StageOptions& options) {
  MoeConfig c;
  c.d_model = options.d_model;
  c.d_hidden = 2 * options.d_model;
  c.experts = options.experts;
  c.top_k = std::min(2, options.experts);
  c.capacity_factor = 1.25;
  c.aux_loss_weight = 0.01;
  return c;
}

// Rank r's tokens: uniform in ±1 around a direction every token shares (`lean`), so the router
// starts out preferring some experts, as a real one does after initialisation.
std::vector<float> tokens_of(int r, int tokens, int channels, double lean) {
  Rng shared(99), rng(1000 + static_cast<std::uint64_t>(r));
  std::vector<float> direction(channels);
  for (auto& d : direction) d = static_cast<float>(shared.uniform(-1.0, 1.0) * lean);
  std::vector<float> x(static_cast<std::size_t>(tokens) * channels);
  for (std::size_t i = 0; i < x.size(); ++i)
    x[i] = static_cast<float>(rng.uniform(-1.0, 1.0)) + direction[i % channels];
  return x;
}

constexpr std::uint64_t kSeed = 5;
constexpr double kInitScale = 0.1;

}  // namespace
}  // namespace book::ep

namespace book::tp {

std::vector<ExpertParallelRow> run_expert_parallel(const StageOptions& options) {
  const ep::MoeConfig c = ep::stage_moe(options);
  const int tokens = options.moe_tokens;
  // Rank 0's output from the layer that holds every expert, for the comparison.
  ep::MoeLayer<float> single(c, {c.experts, 1, 0});
  single.init(ep::kSeed, ep::kInitScale);
  const std::vector<float> x0 = ep::tokens_of(0, tokens, c.d_model, 0.5);
  std::vector<float> want(x0.size());
  single.forward(x0.data(), tokens, want.data());
  std::vector<ExpertParallelRow> rows;
  for (int ranks = 1; ranks <= c.experts; ranks *= 2) {
    if (c.experts % ranks != 0) continue;
    ExpertParallelRow row;
    row.ep = ranks;
    row.tokens = tokens;
    std::vector<std::vector<int>> loads(ranks);
    coll::run_ranks(ranks, [&](coll::Communicator& comm) {
      const int r = comm.rank();
      ep::MoeLayer<float> layer(c, {c.experts, ranks, r}, &comm);
      layer.init(ep::kSeed, ep::kInitScale);
      const std::vector<float> x = ep::tokens_of(r, tokens, c.d_model, 0.5);
      std::vector<float> y(x.size());
      comm.reset_counters();
      const ep::MoeStats stats = layer.forward(x.data(), tokens, y.data());
      loads[r] = stats.load;
      if (r != 0) return;
      row.kept = stats.kept;
      row.dropped = stats.dropped;
      row.rows_to_others = stats.rows_to_others;
      row.bytes_sent = comm.counters().bytes_sent;
      const std::size_t rows_back = stats.rows_received - layer.plan().recv_rows[0];
      row.bytes_formula =
          ((ranks - 1) * (c.experts / ranks) + (stats.rows_to_others + rows_back) * c.d_model) *
          sizeof(float);
      for (std::size_t i = 0; i < y.size(); ++i)
        row.max_output_difference =
            std::max(row.max_output_difference, std::fabs(double(y[i]) - want[i]));
    });
    std::vector<double> load(c.experts, 0.0);
    for (const auto& per_rank : loads)
      for (int e = 0; e < c.experts; ++e) load[e] += per_rank[e];
    double mean = 0;
    for (double l : load) mean += l / c.experts;
    row.max_over_mean_load = *std::max_element(load.begin(), load.end()) / mean;
    rows.push_back(row);
  }
  return rows;
}

//! [load_balance]
std::vector<BalanceStep> run_load_balance(const StageOptions& options) {
  const ep::MoeConfig c = ep::stage_moe(options);
  const int tokens = options.moe_tokens;
  ep::MoeLayer<float> layer(c, {c.experts, 1, 0});
  layer.init(ep::kSeed, ep::kInitScale);
  const std::vector<float> x = ep::tokens_of(0, tokens, c.d_model, 1.5);  // leaning hard
  std::vector<float> y(x.size()), dx(x.size());
  const std::vector<float> no_task_gradient(x.size(), 0.0f);  // the auxiliary loss alone
  const float learning_rate = 0.5f;  // larger steps overshoot and collapse the router
  std::vector<BalanceStep> steps;
  for (int step = 0; step <= options.balance_steps; ++step) {
    const ep::MoeStats stats = layer.forward(x.data(), tokens, y.data());
    if (step % std::max(1, options.balance_steps / 5) == 0 || step == options.balance_steps) {
      const auto& assigned = layer.routing().assigned;
      const double mean = static_cast<double>(tokens) * c.top_k / c.experts;
      steps.push_back({step, stats.aux_loss,
                       static_cast<double>(stats.dropped) / (static_cast<double>(tokens) * c.top_k),
                       *std::max_element(assigned.begin(), assigned.end()) / mean,
                       layer.routing().capacity, assigned});
    }
    if (step == options.balance_steps) break;
    layer.zero_grad();
    layer.backward(no_task_gradient.data(), dx.data());
    for (std::size_t i = 0; i < layer.router_size(); ++i)  // plain gradient descent, router only
      layer.params()[i] -= learning_rate * layer.grads()[i];
  }
  return steps;
}
//! [load_balance]

}  // namespace book::tp
