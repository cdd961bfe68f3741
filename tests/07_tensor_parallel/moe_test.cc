// The mixture-of-experts layer (scaffolding tests, reference exercise bodies): the router's
// top-k, capacity and dropped-token accounting; the load-balancing loss; the single-rank layer's
// gradients against finite differences; and expert parallelism over 1, 2 and 4 thread ranks
// against the single-rank layer with the same experts — outputs, input gradients, the router's
// and every expert's gradients within 1e-12 — with the all-to-all bytes counted exactly.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "chapters/03_collectives/threads.h"
#include "chapters/07_tensor_parallel/moe_layer.h"
#include "common/testing/expect_error.h"
#include "tests/07_tensor_parallel/tp_testing.h"

namespace book::ep {
namespace {

using book::testing::expect_error;
using tp::testing::expect_close;
using tp::testing::kNaN;
using tp::testing::random_vector;

MoeConfig small_config(int experts = 4) {
  MoeConfig c;
  c.d_model = 5;
  c.d_hidden = 7;
  c.experts = experts;
  c.top_k = 2;
  c.capacity_factor = 0.8;  // below 1: some choices must be dropped
  c.aux_loss_weight = 0.05;
  return c;
}

TEST(Routing, TopKCapacityAndDroppedChoicesAddUp) {
  MoeConfig c = small_config();
  c.capacity_factor = 0.75;  // capacity ⌈0.75 · 2 · 6 / 4⌉ = 3
  // 6 tokens; the first prefers expert 2 then 0, equal 0.3s go to the lower index.
  const std::vector<double> probs = {0.3, 0.1, 0.5, 0.1,  //
                                     0.1, 0.3, 0.3, 0.3,  // ties: 1 then 2
                                     0.1, 0.1, 0.7, 0.1,  //
                                     0.1, 0.1, 0.6, 0.2,  //
                                     0.1, 0.2, 0.6, 0.1,  //
                                     0.4, 0.1, 0.1, 0.4};
  const Routing r = route(probs.data(), 6, c);
  EXPECT_EQ(r.capacity, 3);
  EXPECT_EQ(r.expert[0], 2);
  EXPECT_EQ(r.expert[1], 0);
  EXPECT_EQ(r.expert[2], 1) << "equal probabilities go to the lower expert index";
  EXPECT_EQ(r.expert[3], 2);
  // Expert 2 is every token's first or second choice but token 5's: its 3 slots go to first
  // choices in token order (tokens 0, 2, 3), then token 4's first choice is dropped, and token
  // 1's second choice too.
  EXPECT_EQ(r.slot[0], 0);
  EXPECT_EQ(r.slot[2 * 2], 1);
  EXPECT_EQ(r.slot[3 * 2], 2);
  EXPECT_EQ(r.slot[4 * 2], -1) << "a first choice over capacity is dropped";
  EXPECT_EQ(r.slot[1 * 2 + 1], -1) << "second choices come after every first choice";
  int kept = 0;
  for (int e = 0; e < 4; ++e) {
    EXPECT_LE(r.load[e], r.capacity) << "expert " << e;
    EXPECT_GE(r.assigned[e], r.load[e]);
    kept += r.load[e];
  }
  EXPECT_EQ(kept + r.dropped, 6 * 2) << "every choice is kept or dropped";
  EXPECT_EQ(r.kept(), kept);
  EXPECT_EQ(r.assigned[2], 5);
  EXPECT_EQ(r.dropped, r.assigned[2] - r.load[2] + (r.assigned[0] - r.load[0]) +
                           (r.assigned[1] - r.load[1]) + (r.assigned[3] - r.load[3]));
}

TEST(Routing, TheLoadBalancingLossIsAlphaWhenBalancedAndMoreWhenNot) {
  const MoeConfig c = small_config();  // α = 0.05, k = 2
  // Uniform probabilities, each expert chosen by the same number of choices: α · E · Σ (1/E)².
  std::vector<double> uniform(8 * 4, 0.25);
  Routing balanced;
  balanced.tokens = 8;
  balanced.top_k = 2;
  balanced.experts = 4;
  balanced.assigned = {4, 4, 4, 4};
  EXPECT_NEAR(load_balancing_loss(uniform.data(), balanced, c.aux_loss_weight), 0.05, 1e-15);
  // Every choice on experts 0 and 1, which also get all the probability: α · 4 · 2 · (½ · ½) = 2α.
  std::vector<double> skewed(8 * 4, 0.0);
  for (int n = 0; n < 8; ++n) skewed[n * 4] = skewed[n * 4 + 1] = 0.5;
  Routing collapsed = balanced;
  collapsed.assigned = {8, 8, 0, 0};
  EXPECT_NEAR(load_balancing_loss(skewed.data(), collapsed, c.aux_loss_weight), 0.1, 1e-15);
}

// L = Σ y · w + aux: a loss whose gradient with respect to y is w.
double layer_loss(MoeLayer<double>& layer, const std::vector<double>& x, int tokens,
                  const std::vector<double>& w) {
  std::vector<double> y(x.size());
  const MoeStats stats = layer.forward(x.data(), tokens, y.data());
  double loss = stats.aux_loss;
  for (std::size_t i = 0; i < y.size(); ++i) loss += y[i] * w[i];
  return loss;
}

TEST(MoeLayer, GradientsMatchFiniteDifferences) {
  const MoeConfig c = small_config();
  const int tokens = 9;
  MoeLayer<double> layer(c, {c.experts, 1, 0});
  layer.init(3);
  std::vector<double> x = random_vector(static_cast<std::size_t>(tokens) * c.d_model, 4);
  const std::vector<double> w = random_vector(x.size(), 5);
  std::vector<double> y(x.size(), kNaN), dx(x.size(), kNaN);
  const MoeStats stats = layer.forward(x.data(), tokens, y.data());
  ASSERT_GT(stats.dropped, 0) << "the test wants dropped choices (capacity factor 0.8)";
  layer.zero_grad();
  layer.backward(w.data(), dx.data());
  const std::vector<double> grads(layer.grads().begin(), layer.grads().end());
  // Central differences; the routing is piecewise constant, and h = 1e-6 stays inside a piece.
  const double h = 1e-6;
  auto numeric = [&](double& value) {
    const double saved = value;
    value = saved + h;
    const double plus = layer_loss(layer, x, tokens, w);
    value = saved - h;
    const double minus = layer_loss(layer, x, tokens, w);
    value = saved;
    return (plus - minus) / (2 * h);
  };
  std::vector<double> numeric_dx(x.size()), numeric_grads(grads.size());
  for (std::size_t i = 0; i < x.size(); ++i) numeric_dx[i] = numeric(x[i]);
  for (std::size_t i = 0; i < grads.size(); ++i) numeric_grads[i] = numeric(layer.params()[i]);
  expect_close("dx", numeric_dx, dx, 1e-7);
  expect_close("router gradient",
               {numeric_grads.begin(), numeric_grads.begin() + layer.router_size()},
               {grads.begin(), grads.begin() + layer.router_size()}, 1e-7);
  expect_close("expert gradients", numeric_grads, grads, 1e-7);
}

TEST(MoeLayer, ExpertParallelRanksMatchTheSingleRankLayer) {
  for (int experts : {4, 8})
    for (int ranks : {1, 2, 4}) {
      SCOPED_TRACE(std::to_string(experts) + " experts over " + std::to_string(ranks) + " ranks");
      const MoeConfig c = small_config(experts);
      // Rank r's tokens: a different count on each, so every all-to-all count is uneven.
      auto tokens_of = [](int r) { return 6 + 5 * r; };
      auto x_of = [&](int r) {
        return random_vector(static_cast<std::size_t>(tokens_of(r)) * c.d_model, 40 + r);
      };
      auto dy_of = [&](int r) {
        return random_vector(static_cast<std::size_t>(tokens_of(r)) * c.d_model, 50 + r);
      };
      // The reference: one layer with every expert, run on each rank's tokens in turn.
      MoeLayer<double> single(c, {experts, 1, 0});
      single.init(7);
      std::vector<std::vector<double>> want_y, want_dx, want_router;
      std::vector<MoeStats> want_stats;
      std::vector<double> want_experts(single.grads().size() - single.router_size(), 0.0);
      for (int r = 0; r < ranks; ++r) {
        const auto x = x_of(r), dy = dy_of(r);
        std::vector<double> y(x.size()), dx(x.size());
        want_stats.push_back(single.forward(x.data(), tokens_of(r), y.data()));
        single.zero_grad();
        single.backward(dy.data(), dx.data());
        want_y.push_back(y);
        want_dx.push_back(dx);
        want_router.emplace_back(single.grads().begin(),
                                 single.grads().begin() + single.router_size());
        for (std::size_t i = 0; i < want_experts.size(); ++i)
          want_experts[i] += single.grads()[single.router_size() + i];  // Σ over every source
        ASSERT_GT(want_stats.back().dropped, 0) << "capacity factor 0.8 drops some choices";
      }
      coll::run_ranks(ranks, [&](coll::Communicator& comm) {
        const int r = comm.rank();
        SCOPED_TRACE("rank " + std::to_string(r));
        MoeLayer<double> layer(c, {experts, ranks, r}, &comm);
        layer.init(7);
        const auto x = x_of(r), dy = dy_of(r);
        std::vector<double> y(x.size(), kNaN), dx(x.size(), kNaN);
        comm.reset_counters();
        const MoeStats stats = layer.forward(x.data(), tokens_of(r), y.data());
        expect_close("y", want_y[r], y, 1e-12);
        EXPECT_NEAR(stats.aux_loss, want_stats[r].aux_loss, 1e-15);
        EXPECT_EQ(stats.dropped, want_stats[r].dropped);
        EXPECT_EQ(stats.kept, want_stats[r].kept);
        EXPECT_EQ(stats.load, want_stats[r].load);
        // The forward pass's bytes: the counts, the rows out to other ranks, the rows back.
        const std::size_t e = sizeof(double), cc = c.d_model;
        const std::size_t rows_back = stats.rows_received - layer.plan().recv_rows[r];
        EXPECT_EQ(comm.counters().bytes_sent, (ranks - 1) * (experts / ranks) * e +
                                                  stats.rows_to_others * cc * e +
                                                  rows_back * cc * e)
            << "all-to-all volume = routed rows × C × element size (plus E/ranks counts per peer)";
        EXPECT_EQ(stats.rows_sent, static_cast<std::size_t>(stats.kept));
        layer.zero_grad();
        layer.backward(dy.data(), dx.data());
        expect_close("dx", want_dx[r], dx, 1e-12);
        expect_close("the router's gradient (this rank's tokens)", want_router[r],
                     {layer.grads().begin(), layer.grads().begin() + layer.router_size()}, 1e-12);
        const std::size_t first =
            static_cast<std::size_t>(layer.placement().first()) * layer.expert_size();
        const std::size_t size = (experts / ranks) * layer.expert_size();
        expect_close("this rank's experts' gradients (every rank's tokens)",
                     {want_experts.begin() + first, want_experts.begin() + first + size},
                     {layer.grads().begin() + layer.router_size(), layer.grads().end()}, 1e-12);
      });
    }
}

TEST(MoeLayer, RefusesPlacementsAndConfigsThatCannotWork) {
  MoeConfig c = small_config();  // 4 experts
  expect_error(
      [&] {
        ExpertPlacement{4, 3, 0}.validate();
      },
      {"4 experts cannot be spread evenly over 3 ranks", "divides the experts"});
  expect_error(
      [&] {
        ExpertPlacement{4, 8, 0}.validate();
      },
      {"8 expert-parallel ranks for 4 experts", "without an expert"});
  expect_error([&] { ExpertPlacement{4, 2, 2}.validate(); }, "rank 2 of 2 ranks");
  c.top_k = 5;
  expect_error([&] { c.validate(); }, "top_k 5 must be between 1 and the 4 experts");
  c.top_k = 2;
  c.capacity_factor = 0;
  expect_error([&] { c.validate(); }, "capacity_factor 0 must be positive");
  c = small_config();
  expect_error(
      [&] {
        MoeLayer<double>(c, {4, 2, 0});
      },
      "2 expert-parallel ranks need a Communicator");
  expect_error([&] { MoeLayer<double>(c, {8, 1, 0}); }, "spreads 8 experts but the layer has 4");
  coll::run_ranks(2, [&](coll::Communicator& comm) {
    expect_error(
        [&] {
          MoeLayer<double>(c, {4, 2, 1 - comm.rank()}, &comm);
        },
        "but the placement is rank");
  });
  MoeLayer<double> layer(c, {4, 1, 0});
  std::vector<double> dy(5), dx(5);
  expect_error([&] { layer.backward(dy.data(), dx.data()); }, "no forward() has run");
  expect_error([&] { layer.forward(dy.data(), 0, dx.data()); }, "0 tokens; need at least one");
  expect_error([&] { layer.expert_offset(4); }, "local expert 4 of 4");
  MoeConfig bad = small_config();
  bad.d_hidden = 0;
  expect_error([&] { bad.validate(); }, "d_hidden 0 must be >= 1");
  bad = small_config();
  bad.experts = 0;
  expect_error([&] { bad.validate(); }, "0 experts; need at least one");
  bad = small_config();
  bad.aux_loss_weight = -1;
  expect_error([&] { bad.validate(); }, "aux_loss_weight -1 must be >= 0");
  bad.aux_loss_weight = std::numeric_limits<double>::infinity();  // issue 36: was accepted
  expect_error([&] { bad.validate(); }, "aux_loss_weight inf must be >= 0 and finite");
  bad.aux_loss_weight = std::nan("");
  expect_error([&] { bad.validate(); }, "must be >= 0 and finite");
  const std::vector<double> probs(4, 0.25);
  expect_error([&] { route(probs.data(), 0, small_config()); }, "route: 0 tokens");
}

// capacity_factor 1e10 passed validate() and capacity() cast 1e10 · k · N / E to int (undefined;
// INT_MIN on x86, then 1 slot per expert, nearly every choice dropped).
TEST(Routing, CapacityFactorMustBeFiniteAndCapacityIsClampedToTheChoices) {
  MoeConfig c = small_config();  // 4 experts, top_k 2
  for (double factor : {std::numeric_limits<double>::infinity(), std::nan("")}) {
    c.capacity_factor = factor;
    expect_error([&] { c.validate(); }, {"capacity_factor", "must be positive and finite"});
  }
  c.capacity_factor = 1e10;
  c.validate();
  // 10 tokens, k = 2: at most 2 · 10 = 20 choices exist, so 20 slots, not ⌈1e10 · 20 / 4⌉.
  EXPECT_EQ(c.capacity(10), 20);
  std::vector<double> probs(10 * 4);
  for (std::size_t i = 0; i < probs.size(); ++i) probs[i] = (i % 4 == 1) ? 0.4 : 0.2;
  const Routing r = route(probs.data(), 10, c);
  EXPECT_EQ(r.dropped, 0) << "capacity " << r.capacity;
  c.capacity_factor = 1.25;  // the usual factor is unchanged: ⌈1.25 · 2 · 10 / 4⌉ = ⌈6.25⌉ = 7
  EXPECT_EQ(c.capacity(10), 7);
}

// check_dispatch (what dispatch calls first, on both tracks): a placement that does not match the
// routing or the group, or a routing that is not route()'s shape.
TEST(Routing, CheckDispatchRefusesAPlacementThatDoesNotFit) {
  const std::vector<double> probs(3 * 8, 0.125);
  MoeConfig eight = small_config(8);
  const Routing routing = route(probs.data(), 3, eight);
  check_dispatch(routing, {8, 2, 1}, 2, 1);
  expect_error(
      [&] {
        check_dispatch(routing, {4, 2, 0}, 2, 0);
      },
      {"spreads 4 experts", "among 8", "same MoeConfig"});
  expect_error(
      [&] {
        check_dispatch(routing, {8, 4, 0}, 2, 0);
      },
      {"placement is rank 0 of 4", "communicator is rank 0 of 2"});
  expect_error([&] { check_dispatch(routing, {8, 3, 0}, 3, 0); }, "cannot be spread evenly");
  Routing cut = routing;
  cut.load.pop_back();
  expect_error([&] { check_dispatch(cut, {8, 2, 0}, 2, 0); }, {"7 loads", "route()"});
}

}  // namespace
}  // namespace book::ep
