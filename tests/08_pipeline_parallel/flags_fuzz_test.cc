// Issue 19: chapter 8's stage's command line against thousands of seeded hostile argument lists
// (common/testing/flag_fuzz.h): each parses or is refused with a book::Error that says something;
// nothing else is thrown, nothing hangs. And the refusals that name the pipeline's constraints.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "chapters/08_pipeline_parallel/stage.h"
#include "common/testing/expect_error.h"
#include "common/testing/flag_fuzz.h"

namespace {

using book::testing::fuzz_command_line;

std::vector<const char*> argv_of(const std::vector<std::string>& arguments) {
  std::vector<const char*> argv{"pipeline"};
  for (const std::string& a : arguments) argv.push_back(a.c_str());
  return argv;
}

book::pp::stage::StageOptions parse(const std::vector<std::string>& arguments) {
  const auto argv = argv_of(arguments);
  return book::pp::stage::parse_stage_options(static_cast<int>(argv.size()), argv.data());
}

TEST(FlagsFuzz, Pipeline) {
  const auto counts = fuzz_command_line(
      [](const std::vector<std::string>& a) { (void)parse(a); },
      {"--tour", "--schedule=zb-h1", "--stages=4", "--micro-batches=8", "--chunks=2", "--layers=8",
       "--d-model=32", "--heads=4", "--batch=2", "--help"},
      3000, 808);
  EXPECT_GT(counts.parsed, 0) << "no argument list parsed: the fuzzer tests nothing but refusals";
  EXPECT_GT(counts.refused, 0) << "no argument list was refused";
}

TEST(PipelineOptions, RefusesShapesAScheduleCannotRun) {
  EXPECT_EQ(parse({"--tour"}).schedules.size(), 4u);
  book::testing::expect_error(
      [] {
        parse({"--stages", "4", "--layers", "3"});
      },
      {"fewer layers than stages", "--layers 3", "--layers 4"});
  book::testing::expect_error(
      [] {
        parse({"--schedule", "interleaved", "--stages", "2", "--chunks", "3", "--layers", "8"});
      },
      {"--layers 8", "p·v = 6", "multiple of 6"});
  book::testing::expect_error(
      [] {
        parse({"--schedule", "interleaved", "--stages", "4", "--micro-batches", "6"});
      },
      {"--micro-batches 6", "not a multiple of --stages 4"});
  book::testing::expect_error(
      [] {
        parse({"--schedule", "zb-h1", "--stages", "4", "--micro-batches", "3"});
      },
      "ZB-H1 needs m >= p");
  book::testing::expect_error([] { parse({"--schedule", "pipedream"}); }, "pipedream");
}

// Issue 35: the placements run as MPI processes on the namespace cluster, never on threads.
TEST(PipelineOptions, RefusesClusterWithoutMpi) {
  book::testing::expect_error([] { parse({"--cluster"}); },
                              {"--cluster", "pass --backend mpi", "tools/cluster/cluster.sh run"});
  EXPECT_TRUE(parse({"--cluster", "--backend", "mpi"}).cluster);
}

}  // namespace
