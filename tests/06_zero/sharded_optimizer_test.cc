// Graded: zero.shard_optimizer_step. N ranks, each owning the pieces a shard plan gives it, clip
// by the global norm and update with AdamW; the pieces put together equal one device's
// clip_global_norm + adamw_update over the whole buffer, bit for bit (AdamW is element-wise; the
// norm's FP64 sum is compared with a stated tolerance). Mismatched pieces refused with messages.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "chapters/03_collectives/threads.h"
#include "chapters/04_training_baseline/clipping.h"
#include "chapters/05_data_parallel/gradient_sync.h"
#include "chapters/06_zero/sharded_optimizer.h"
#include "chapters/06_zero/sharding.h"
#include "common/rng.h"
#include "common/testing/exercise.h"
#include "common/testing/expect_error.h"

namespace book::zero {
namespace {

train::Config tiny_config() {
  train::Config c;
  c.vocab_size = 13;
  c.context = 11;
  c.n_layer = 2;
  c.n_head = 2;
  c.d_model = 16;
  return c;
}

std::vector<float> seeded(std::size_t n, std::uint64_t seed, double scale) {
  Rng rng(seed);
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(scale * (2 * rng.uniform() - 1));
  return v;
}

// The norm's tolerance, relative: the FP64 sum of squares in another order.
constexpr double kNormTolerance = 1e-12;

EXERCISE_TEST("zero.shard_optimizer_step", ShardedOptimizer, PiecesEqualOneDeviceUpdate) {
  const train::ParameterLayout layout(tiny_config());
  const std::size_t total = layout.total();
  const auto buckets = ddp::plan_buckets(ddp::tensor_ranges(layout), 2048, sizeof(float));
  const std::vector<float> weights0 = seeded(total, 1, 0.5);
  const train::AdamWConfig config;
  for (double grad_scale : {0.01, 10.0}) {  // under the clip norm of 1, and clipped
    const std::vector<float> grads0 = seeded(total, 2, grad_scale);
    // One device, two steps.
    std::vector<float> w1 = weights0;
    train::AdamWState state(0, total);
    double norm1 = 0;
    for (int step = 0; step < 2; ++step) {
      std::vector<float> g = grads0;
      norm1 = train::clip_global_norm(g, 1.0f);
      train::adamw_update(layout, state, w1, g, 1e-2f, config);
    }
    for (int n : {1, 2, 3, 4}) {
      std::vector<float> assembled(total, std::nanf(""));
      std::vector<double> norms(static_cast<std::size_t>(n));
      coll::run_ranks(n, [&](coll::Communicator& comm) {
        const ShardPlan plan = plan_shards(buckets, n, comm.rank(), Stage::kZero1);
        std::vector<float> master(plan.owned), grads(plan.owned);
        std::vector<train::AdamWState> states;
        for (const auto& p : plan.pieces) states.emplace_back(p.begin, p.end);
        for (int step = 0; step < 2; ++step) {
          std::vector<std::span<float>> m, g;
          for (std::size_t i = 0; i < plan.pieces.size(); ++i) {
            const auto& p = plan.pieces[i];
            if (step == 0)
              std::copy(weights0.begin() + p.begin, weights0.begin() + p.end,
                        master.begin() + plan.offsets[i]);
            std::copy(grads0.begin() + p.begin, grads0.begin() + p.end,
                      grads.begin() + plan.offsets[i]);
            m.push_back(std::span<float>(master).subspan(plan.offsets[i], p.size()));
            g.push_back(std::span<float>(grads).subspan(plan.offsets[i], p.size()));
          }
          norms[comm.rank()] =
              shard_optimizer_step(&comm, layout, plan.pieces, m, g, states, 1e-2f, config, 1.0f);
        }
        for (std::size_t i = 0; i < plan.pieces.size(); ++i) {
          const auto& p = plan.pieces[i];
          std::copy(master.begin() + plan.offsets[i], master.begin() + plan.offsets[i] + p.size(),
                    assembled.begin() + p.begin);
        }
      });
      for (int r = 0; r < n; ++r)
        EXPECT_NEAR(norms[r], norm1, kNormTolerance * norm1)
            << "N=" << n << " rank " << r << " gradient scale " << grad_scale;
      for (std::size_t i = 0; i < total; ++i) {
        if (std::memcmp(&assembled[i], &w1[i], sizeof(float)) != 0) {
          ADD_FAILURE() << "N=" << n << " gradient scale " << grad_scale << ": weight " << i
                        << " of " << total << " is " << assembled[i] << ", one device's " << w1[i]
                        << "; first mismatch shown";
          break;
        }
      }
    }
  }
}

EXERCISE_TEST("zero.shard_optimizer_step", ShardedOptimizer, MismatchedPiecesAreRefused) {
  const train::ParameterLayout layout(tiny_config());
  const std::vector<ddp::FlatRange> pieces = {{0, 10}, {10, 30}};
  std::vector<float> a(10), b(20), c(19);
  std::vector<train::AdamWState> states;
  states.emplace_back(0, 10);
  states.emplace_back(10, 30);
  const std::vector<std::span<float>> master = {a, b}, short_grads = {a, c}, one = {a};
  testing::expect_error(
      [&] { shard_optimizer_step(nullptr, layout, pieces, master, one, states, 1e-3f, {}, 1.0f); },
      {"2 pieces", "1 gradient spans"});
  testing::expect_error(
      [&] {
        shard_optimizer_step(nullptr, layout, pieces, master, short_grads, states, 1e-3f, {}, 1.0f);
      },
      {"piece 1 is [10, 30)", "its gradients 19"});
}

}  // namespace
}  // namespace book::zero
