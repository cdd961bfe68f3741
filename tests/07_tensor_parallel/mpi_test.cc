// Tensor, sequence and expert parallelism as real processes: mpi_test() starts this binary N
// times under mpirun (N = 2 in CI), each process one rank of chapter 3's MPI backend. Each
// process also runs the one-device reference itself, so every check is local: the
// tensor-parallel model's loss and gradient shard equal chapter 4's, the bytes it sent equal the
// ring's formula, and the expert-parallel MoE layer equals the single-rank layer.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "chapters/03_collectives/mpi.h"
#include "chapters/04_training_baseline/model.h"
#include "chapters/04_training_baseline/step.h"
#include "chapters/07_tensor_parallel/accounting.h"
#include "chapters/07_tensor_parallel/moe_layer.h"
#include "chapters/07_tensor_parallel/tensor_parallel_seam.h"
#include "tests/07_tensor_parallel/model_runs.h"
#include "tests/07_tensor_parallel/tp_testing.h"

namespace book::tp {
namespace {

TEST(Mpi, TensorAndSequenceParallelRanksMatchChapter4) {
  coll::MpiCommunicator comm;
  const int t = comm.size(), r = comm.rank();
  const train::Config config = testing::tiny_config();
  if (config.n_head % t != 0) GTEST_SKIP() << t << " processes do not divide the 4 heads";
  const train::Batch batch = testing::tiny_batch(17);
  train::Model<double> whole(config, batch.batch);
  const auto params = testing::random_parameters(whole.layout(), 18);
  std::copy(params.begin(), params.end(), whole.params().begin());
  whole.zero_grad();
  const double loss = train::forward_backward(whole, batch, 1.0);
  const std::vector<double> want(whole.grads().begin(), whole.grads().end());
  for (SequenceParallel sp : {SequenceParallel::kOff, SequenceParallel::kOn}) {
    SCOPED_TRACE(std::string("sequence parallelism ") + sequence_parallel_name(sp) + ", rank " +
                 std::to_string(r) + " of " + std::to_string(t));
    TensorParallelGroup<double> group(comm);
    testing::TensorParallelRank model_rank(config, batch.batch, {0, -1, {r, t}}, sp, &group);
    train::Model<double>& model = model_rank.model;
    train::copy_from_whole<double>(whole.layout(), params, model.layout(), model.params().span());
    train::Activations<double> acts(model);
    comm.reset_counters();
    model.zero_grad();
    EXPECT_NEAR(train::forward_backward(model, batch, 1.0, acts), loss, 1e-11 * loss);
    model.finish_gradients();
    std::vector<double> placed(whole.layout().total(), testing::kNaN);
    train::copy_to_whole<double>(model.layout(), {model.grads().begin(), model.grads().end()},
                                 whole.layout(), placed);
    std::size_t compared = 0;
    for (std::size_t i = 0; i < placed.size(); ++i) {
      if (std::isnan(placed[i])) continue;  // another rank's shard
      ++compared;
      ASSERT_NEAR(placed[i], want[i], 1e-11 * std::max(1.0, std::fabs(want[i])))
          << "gradient element " << i;
    }
    // Every element of this rank's own shard was placed and compared: a NaN of its own would
    // otherwise pass as "another rank's shard".
    EXPECT_EQ(compared, model.layout().total()) << "rank " << r << ": gradient elements compared";
    const auto step = step_collectives(config, batch.batch, batch.seq_len, t, sp);
    testing::expect_counts(count(step), group.counts(), "one step");
    EXPECT_EQ(comm.counters().bytes_sent, ring_elements_sent(step, t, r) * sizeof(double));
  }
}

TEST(Mpi, ExpertParallelRanksMatchTheSingleRankLayer) {
  coll::MpiCommunicator comm;
  const int ranks = comm.size(), r = comm.rank();
  ep::MoeConfig c;
  c.d_model = 6;
  c.d_hidden = 8;
  c.experts = 4;
  c.capacity_factor = 0.8;
  if (c.experts % ranks != 0) GTEST_SKIP() << ranks << " processes do not divide 4 experts";
  const int tokens = 7 + 3 * r;
  const auto x = testing::random_vector(static_cast<std::size_t>(tokens) * c.d_model, 60 + r);
  const auto dy = testing::random_vector(x.size(), 70 + r);
  ep::MoeLayer<double> single(c, {c.experts, 1, 0});
  single.init(9);
  std::vector<double> want_y(x.size()), want_dx(x.size());
  single.forward(x.data(), tokens, want_y.data());
  single.backward(dy.data(), want_dx.data());
  ep::MoeLayer<double> layer(c, {c.experts, ranks, r}, &comm);
  layer.init(9);
  std::vector<double> y(x.size(), testing::kNaN), dx(x.size(), testing::kNaN);
  layer.forward(x.data(), tokens, y.data());
  layer.backward(dy.data(), dx.data());
  testing::expect_close("y on rank " + std::to_string(r), want_y, y, 1e-12);
  testing::expect_close("dx on rank " + std::to_string(r), want_dx, dx, 1e-12);
  testing::expect_close("the router's gradient",
                        {single.grads().begin(), single.grads().begin() + single.router_size()},
                        {layer.grads().begin(), layer.grads().begin() + layer.router_size()},
                        1e-12);
}

}  // namespace
}  // namespace book::tp
