// Scaffolding: busbw_mpi --cluster's command line, and its refusal outside the namespace cluster
// (the measurement itself needs tools/cluster/cluster.sh: a stage run, not a test).
#include <gtest/gtest.h>

#include <cstdlib>

#include "chapters/03_collectives/stage.h"
#include "chapters/03_collectives/threads.h"
#include "common/flags.h"
#include "common/testing/expect_error.h"

namespace book::coll::stage {
namespace {

using book::testing::expect_error;

StageOptions parse(BusbwStage stage, std::vector<const char*> args) {
  args.insert(args.begin(), "busbw_mpi");
  return parse_stage_options(stage, static_cast<int>(args.size()), args.data());
}

TEST(StageCluster, FlagAndItsDefaults) {
  EXPECT_FALSE(parse(BusbwStage::kMpi, {}).cluster);
  const StageOptions cluster = parse(BusbwStage::kMpi, {"--cluster"});
  EXPECT_TRUE(cluster.cluster);
  EXPECT_EQ(cluster.max_mib, 16) << "16 MiB unless given: a large size the slow link takes fast";
  const StageOptions tour = parse(BusbwStage::kMpi, {"--cluster", "--tour"});
  EXPECT_EQ(tour.max_mib, 4) << "the tour's short run";
  EXPECT_EQ(tour.repetitions, 3);
  const StageOptions set = parse(BusbwStage::kMpi, {"--cluster", "--max-mib", "4",
                                                    "--repetitions", "3"});
  EXPECT_EQ(set.max_mib, 4);
  EXPECT_EQ(set.repetitions, 3);
}

TEST(StageCluster, RefusesWhatDoesNotApply) {
  expect_error([] { parse(BusbwStage::kThreads, {"--cluster"}); }, "--cluster");
  expect_error([] { parse(BusbwStage::kNccl, {"--cluster"}); }, "--cluster");
  expect_error([] { parse(BusbwStage::kMpi, {"--repetitions", "3"}); },
               "--repetitions under MPI is --cluster's");
  expect_error([] { parse(BusbwStage::kMpi, {"--cluster", "--repetitions", "0"}); },
               "--repetitions must be in 1..100, got 0");
}

TEST(StageCluster, OutsideTheClusterSaysHowToRunIt) {
  ::unsetenv("BOOK_CLUSTER_NODES");
  const StageOptions options = parse(BusbwStage::kMpi, {"--cluster"});
  expect_error(
      [&] { run_ranks(2, [&](Communicator& comm) { cluster_section(options, comm); }); },
      "run it as tools/cluster/cluster.sh run");
}

TEST(StageCluster, RefusesAWorldThatIsNotTheCluster) {
  ::setenv("BOOK_CLUSTER_NODES", "2", 1);
  ::setenv("BOOK_CLUSTER_RANKS_PER_NODE", "2", 1);
  const StageOptions options = parse(BusbwStage::kMpi, {"--cluster"});
  expect_error(
      [&] { run_ranks(2, [&](Communicator& comm) { cluster_section(options, comm); }); },
      "the cluster has 2 nodes x 2 ranks but MPI started 2 processes");
  ::unsetenv("BOOK_CLUSTER_NODES");
  ::unsetenv("BOOK_CLUSTER_RANKS_PER_NODE");
}

}  // namespace
}  // namespace book::coll::stage
