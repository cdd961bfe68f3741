// Scaffolding, not an exercise: the dispatcher, sgemm and the stages' command lines reject bad
// input with a clear message before any rung runs (so these pass on both tracks).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "chapters/01_gemm_cpu/args.h"
#include "chapters/01_gemm_cpu/dispatch.h"
#include "chapters/01_gemm_cpu/ladder_steps.h"
#include "chapters/01_gemm_cpu/peak.h"
#include "chapters/01_gemm_cpu/sgemm.h"
#include "chapters/01_gemm_cpu/tune.h"
#include "common/check.h"
#include "common/flags.h"
#include "common/testing/expect_error.h"

namespace book::gemm {
namespace {

using ::book::testing::expect_error;

std::vector<float> buf(64 * 64, 1.0f);
const float* a = buf.data();
const float* b = buf.data();
std::vector<float> out(64 * 64, 0.0f);

TEST(MatmulArguments, RejectsZeroAndNegativeSizes) {
  float* c = out.data();
  expect_error([&] { matmul(Rung::kNaive, 0, 4, 4, a, 4, b, 4, c, 4); }, "sizes must be positive");
  expect_error([&] { matmul(Rung::kNaive, 4, -1, 4, a, 4, b, 4, c, 4); }, "n=-1");
  expect_error([&] { matmul(Rung::kThreads, 4, 4, 0, a, 4, b, 4, c, 4); }, "k=0");
}

TEST(MatmulArguments, RejectsNullPointers) {
  float* c = out.data();
  expect_error([&] { matmul(Rung::kNaive, 4, 4, 4, nullptr, 4, b, 4, c, 4); }, "A is null");
  expect_error([&] { matmul(Rung::kNaive, 4, 4, 4, a, 4, nullptr, 4, c, 4); }, "B is null");
  expect_error([&] { matmul(Rung::kNaive, 4, 4, 4, a, 4, b, 4, nullptr, 4); }, "C is null");
}

TEST(MatmulArguments, RejectsShortLeadingDimensions) {
  float* c = out.data();
  expect_error([&] { matmul(Rung::kNaive, 4, 5, 6, a, 5, b, 5, c, 5); }, "lda=5");
  expect_error([&] { matmul(Rung::kNaive, 4, 5, 6, a, 6, b, 4, c, 5); }, "ldb=4");
  expect_error([&] { matmul(Rung::kNaive, 4, 5, 6, a, 6, b, 5, c, 4); }, "ldc=4");
}

TEST(MatmulArguments, RejectsUnknownRung) {
  float* c = out.data();
  expect_error([&] { matmul(static_cast<Rung>(42), 4, 4, 4, a, 4, b, 4, c, 4); },
               "unknown rung 42");
}

TEST(Rungs, NamesAndIdsFollowLadderOrder) {
  int number = 1;
  for (Rung rung : all_rungs()) {
    EXPECT_EQ(static_cast<int>(rung), number);
    EXPECT_EQ(rung_exercise_id(rung), "gemm.0" + std::to_string(number));
    EXPECT_EQ(rung_name(rung).substr(0, 2), "0" + std::to_string(number));
    ++number;
  }
  EXPECT_EQ(number, 10);
}

TEST(SgemmArguments, RejectsBadInput) {
  float* c = out.data();
  const auto no = Transpose::kNo, yes = Transpose::kYes;
  expect_error([&] { sgemm(no, no, -3, 4, 4, 1, a, 4, b, 4, 0, c, 4); }, "m=-3");
  expect_error([&] { sgemm(no, no, 4, 4, 4, 1, nullptr, 4, b, 4, 0, c, 4); }, "A is null");
  // Transposed A is stored k×m: its rows have m elements, so lda must be >= m, not k.
  expect_error([&] { sgemm(yes, no, 7, 4, 3, 1, a, 3, b, 4, 0, c, 4); }, "lda=3");
  expect_error([&] { sgemm(no, yes, 4, 7, 3, 1, a, 3, b, 2, 0, c, 7); }, "ldb=2");
  expect_error([&] { sgemm(no, no, 4, 7, 3, 1, a, 3, b, 7, 0, c, 6); }, "ldc=6");
  expect_error([] { SgemmThreads bad(-1); }, "threads must be >= 0");
}

TEST(StageCheck, CloseToAcceptsRoundingAndRejectsErrorsNanAndSizes) {
  const int k = 100;
  const double tolerance = (k + 4) * std::ldexp(1.0, -23) * k;  // 1.24e-3
  const std::vector<float> ref{1.0f, -2.0f, 0.5f};
  std::vector<float> c{1.0f + 1e-4f, -2.0f, 0.5f};
  EXPECT_TRUE(close_to(c, ref, k));
  c[1] = static_cast<float>(-2.0 - 2 * tolerance);
  EXPECT_FALSE(close_to(c, ref, k));
  c[1] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_FALSE(close_to(c, ref, k));
  EXPECT_FALSE(close_to(std::vector<float>{1.0f}, ref, k));
}

TEST(PeakArguments, RejectsNonPositiveThreads) {
  expect_error([] { measure_fp32_peak_gflops(0); }, "threads must be >= 1");
  expect_error([] { measure_triad_bandwidth_gbs(-2); }, "threads must be >= 1");
  expect_error([] { measure_read_bandwidth_gbs(0); }, "threads must be >= 1");
}

TEST(LadderOptions, DefaultsTourBigAndSizes) {
  EXPECT_EQ(ladder::parse_options({}).sizes, (std::vector<int>{256, 512, 1024, 2048}));
  const ladder::Options tour = ladder::parse_options({"--tour"});
  EXPECT_TRUE(tour.tour);
  EXPECT_EQ(tour.sizes, std::vector<int>{1024});
  EXPECT_EQ(ladder::parse_options({"--tour", "--sizes=512"}).sizes, std::vector<int>{512});
  EXPECT_EQ(ladder::parse_options({"--sizes", "100,127", "--big"}).sizes,
            (std::vector<int>{100, 127, 4096}));
  EXPECT_TRUE(ladder::parse_options({"--slow"}).slow_everywhere);
}

// Issue 19: `--sizes=5x` ran n = 5 and `--sizes=1e3` ran n = 1.
TEST(LadderOptions, RefusesMalformedAndOutOfRangeSizesAndUnknownFlags) {
  expect_error([] { ladder::parse_options({"--sizes=5x"}); }, {"--sizes", "5x"});
  expect_error([] { ladder::parse_options({"--sizes=1e3"}); }, {"--sizes", "1e3"});
  expect_error([] { ladder::parse_options({"--sizes=1024,,2048"}); }, "--sizes");
  expect_error([] { ladder::parse_options({"--sizes=0"}); }, {"--sizes", "1..16384", "0"});
  expect_error([] { ladder::parse_options({"--sizes=20000"}); }, {"1..16384", "20000"});
  expect_error([] { ladder::parse_options({"--sizes"}); }, "--sizes");
  expect_error([] { ladder::parse_options({"--bigg"}); }, {"unknown flag --bigg", "--big"});
  expect_error([] { ladder::parse_options({"1024"}); }, "unexpected argument '1024'");
  EXPECT_THROW(ladder::parse_options({"--help"}), HelpRequested);
}

TEST(TuneOptions, DefaultsAndRefusals) {
  const TuneOptions defaults = parse_tune_options({});
  EXPECT_EQ(defaults.n, 1024);
  EXPECT_EQ(defaults.threads, 1);
  EXPECT_EQ(defaults.l1, 0);
  const TuneOptions given = parse_tune_options({"--n=2048", "--threads", "2", "--l2=1048576"});
  EXPECT_EQ(given.n, 2048);
  EXPECT_EQ(given.threads, 2);
  EXPECT_EQ(given.l2, 1048576);
  expect_error([] { parse_tune_options({"--n=abc"}); }, {"--n", "abc"});
  expect_error([] { parse_tune_options({"--n=32"}); }, {"--n", "64..16384", "32"});
  expect_error([] { parse_tune_options({"--threads=0"}); }, {"--threads", "0"});
  expect_error([] { parse_tune_options({"--l1=512"}); },
               {"--l1", "0 (ask the C library) or at least 1024", "512"});
  expect_error([] { parse_tune_options({"--l2=-1"}); }, {"--l2", "-1"});
  EXPECT_EQ(parse_tune_options({"--l1=0"}).l1, 0) << "0, the default, means: ask the C library";
  expect_error([] { parse_tune_options({"--size=8"}); }, "unknown flag --size");
  EXPECT_THROW(parse_tune_options({"-h"}), HelpRequested);
}

}  // namespace
}  // namespace book::gemm
