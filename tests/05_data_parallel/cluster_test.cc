// Scaffolding for ddp --backend mpi --cluster: the α-β fit from ping-pong times (link_fit.h) on
// synthetic timings, the flag's refusals, and the analysis refused outside the namespace cluster
// (the measurement itself needs tools/cluster/cluster.sh: a stage run, not a test).
#include <gtest/gtest.h>

#include <cstdlib>

#include "chapters/03_collectives/threads.h"
#include "chapters/05_data_parallel/link_fit.h"
#include "chapters/05_data_parallel/stage.h"
#include "common/flags.h"
#include "common/testing/expect_error.h"

namespace book::ddp {
namespace {

using book::testing::expect_error;

TEST(LinkFit, RecoversAlphaAndBandwidthFromExactTimes) {
  const Link truth{25e-6, 117e6};  // a 1 Gbit/s link's TCP ceiling, 25 us per message
  const double small = 1024, large = 4 << 20;
  const Link fit =
      fit_ping_pong(small, message_seconds(small, truth), large, message_seconds(large, truth));
  EXPECT_NEAR(fit.alpha_s, truth.alpha_s, 1e-12);
  EXPECT_NEAR(fit.bytes_per_s, truth.bytes_per_s, 1e-3);
  EXPECT_DOUBLE_EQ(message_seconds(0, fit), fit.alpha_s);
  // A zero-byte small message is α itself.
  const Link zero = fit_ping_pong(0, 10e-6, 1e6, 10e-6 + 1e6 / 2e9);
  EXPECT_NEAR(zero.alpha_s, 10e-6, 1e-15);
  EXPECT_NEAR(zero.bytes_per_s, 2e9, 1);
}

TEST(LinkFit, RefusesTimesThatAreNoise) {
  expect_error([] { fit_ping_pong(4096, 1e-5, 1024, 2e-5); },
               "needs a large message above the small one");
  expect_error([] { fit_ping_pong(1024, 0, 4096, 2e-5); }, "must be positive and finite");
  expect_error([] { fit_ping_pong(1024, 2e-5, 4096, 1e-5); }, "time more round trips");
  // B fine but α negative: the small message was faster than its share of bandwidth allows.
  expect_error([] { fit_ping_pong(1e6, 1e-6, 2e6, 1e-3); }, "non-negative latency");
}

stage::StageOptions parse(std::vector<const char*> args) {
  args.insert(args.begin(), "ddp");
  return stage::parse_stage_options(static_cast<int>(args.size()), args.data());
}

TEST(ClusterFlag, DefaultsAndRefusals) {
  const stage::StageOptions o = parse({"--backend", "mpi", "--cluster"});
  EXPECT_TRUE(o.cluster);
  EXPECT_EQ(o.rungs, (std::vector<Rung>{Rung::kFlat, Rung::kNoSync}));
  EXPECT_EQ(o.steps, 6);
  EXPECT_EQ(o.warmup, 1);
  EXPECT_EQ(parse({"--backend", "mpi", "--cluster", "--rungs", "buckets"}).rungs,
            (std::vector<Rung>{Rung::kBuckets}));
  expect_error([] { parse({"--cluster"}); }, "add --backend mpi");
}

TEST(ClusterFlag, OutsideTheClusterSaysHowToRunIt) {
  ::unsetenv("BOOK_CLUSTER_NODES");
  const stage::StageOptions o = parse({"--backend", "mpi", "--cluster"});
  expect_error(
      [&] { coll::run_ranks(2, [&](coll::Communicator& c) { stage::cluster_analysis(o, c); }); },
      "run it as tools/cluster/cluster.sh run");
}

}  // namespace
}  // namespace book::ddp
