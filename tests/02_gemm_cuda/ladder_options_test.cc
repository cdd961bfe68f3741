// The ladder stage's command line (scaffolding, runs anywhere): the defaults, --tour, and the
// refusals, among them issue 19's `--sizes=5x` and `--sizes=1e3`.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "chapters/02_gemm_cuda/ladder_options.h"
#include "common/flags.h"
#include "common/testing/expect_error.h"

namespace book::gemm_cuda {
namespace {

using ::book::testing::expect_error;

TEST(LadderOptions, DefaultsTourAndSizes) {
  EXPECT_EQ(parse_ladder_options({}).sizes, (std::vector<int>{1024, 2048, 4096, 8192}));
  const LadderOptions tour = parse_ladder_options({"--tour"});
  EXPECT_TRUE(tour.tour);
  EXPECT_EQ(tour.sizes, std::vector<int>{4096});
  EXPECT_EQ(parse_ladder_options({"--tour", "--sizes=1024"}).sizes, std::vector<int>{1024});
  EXPECT_EQ(parse_ladder_options({"--sizes", "100,4096"}).sizes, (std::vector<int>{100, 4096}));
}

TEST(LadderOptions, SkipTakesRungNamesAndRefusesUnknownOnes) {
  EXPECT_TRUE(parse_ladder_options({}).skip.empty());
  EXPECT_EQ(parse_ladder_options({"--skip=wgmma_tma,mma_cp_async"}).skip,
            (std::vector<std::string>{"wgmma_tma", "mma_cp_async"}));
  const std::vector<std::string> rungs = {"cublas_sgemm", "naive", "wgmma_tma"};
  check_skipped_rungs({"wgmma_tma"}, rungs);  // known: no throw
  check_skipped_rungs({}, rungs);
  expect_error(
      [&] {
        check_skipped_rungs({"naive", "wgmma"}, rungs);
      },
      {"--skip", "no rung named 'wgmma'", "cublas_sgemm, naive, wgmma_tma"});
  EXPECT_THROW(check_skipped_rungs({"x"}, rungs), UsageError);
}

TEST(LadderOptions, RefusesMalformedSizesAndUnknownFlags) {
  expect_error([] { parse_ladder_options({"--sizes=5x"}); }, {"--sizes", "'5x'"});
  expect_error([] { parse_ladder_options({"--sizes=1e3"}); }, {"--sizes", "'1e3'"});
  expect_error([] { parse_ladder_options({"--sizes=0"}); }, {"1..16384", "0"});
  expect_error([] { parse_ladder_options({"--sizes="}); }, "--sizes");
  expect_error([] { parse_ladder_options({"--tuor"}); }, {"unknown flag --tuor", "--tour"});
  expect_error([] { parse_ladder_options({"4096"}); }, "unexpected argument '4096'");
  EXPECT_THROW(parse_ladder_options({"--help"}), HelpRequested);
}

}  // namespace
}  // namespace book::gemm_cuda
