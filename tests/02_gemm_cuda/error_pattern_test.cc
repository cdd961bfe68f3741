// The pattern of wrong elements that a failed GPU check prints: each tag on an output with
// errors planted where the bug it names would put them, and no tag where it does not hold.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "chapters/02_gemm_cuda/error_pattern.h"
#include "chapters/02_gemm_cuda/reference.h"
#include "common/testing/expect_error.h"

namespace book::gemm_cuda {
namespace {

// An m × n output that is right everywhere (1.0f) with `plant(r, c)` wrong (2.0f, or NaN when
// `unwritten`), read against `tile`.
template <typename Plant>
ErrorPattern planted(GemmShape s, TileSize tile, Plant plant, bool unwritten = false) {
  std::vector<float> got(std::size_t(s.m) * s.n, 1.0f);
  std::vector<std::uint8_t> wrong(got.size(), 0);
  for (int r = 0; r < s.m; ++r)
    for (int c = 0; c < s.n; ++c)
      if (plant(r, c)) {
        wrong[std::size_t(r) * s.n + c] = 1;
        got[std::size_t(r) * s.n + c] = unwritten ? std::numeric_limits<float>::quiet_NaN() : 2.0f;
      }
  return describe_errors(wrong, got, s, tile);
}

const GemmShape kShape{300, 264, 64};  // 3 × 3 tiles of 128: the last row and column partial
const TileSize kTile{128, 128};

TEST(ErrorPattern, NothingWrongHasNoTags) {
  const ErrorPattern p = planted(kShape, kTile, [](int, int) { return false; });
  EXPECT_EQ(p.wrong, 0);
  EXPECT_EQ(p.tags(), "");
}

TEST(ErrorPattern, RightHalfOfEveryTileIsTheSecondBBox) {
  // Rung 10 with a wrong leading offset in the B descriptor: columns 64..127 of each tile.
  const ErrorPattern p = planted(kShape, kTile, [](int, int c) { return c % 128 >= 64; });
  EXPECT_TRUE(p.right_half_only);
  EXPECT_TRUE(p.whole_columns);
  EXPECT_FALSE(p.edge_tiles_only);
  EXPECT_EQ(p.unwritten, 0);
  EXPECT_EQ(p.tags(), "[right half of tile only] [whole 8x8 groups] [whole columns]");
  // One wrong element in the left half breaks it.
  const ErrorPattern q =
      planted(kShape, kTile, [](int r, int c) { return c % 128 >= 64 || (r == 5 && c == 3); });
  EXPECT_FALSE(q.right_half_only);
}

TEST(ErrorPattern, WholeEightByEightGroupsAreASwizzleSignature) {
  // Every other 8 × 8 group along a diagonal band: not whole rows or columns, whole groups.
  const ErrorPattern p =
      planted(kShape, kTile, [](int r, int c) { return (r / 8 + c / 8) % 3 == 0; });
  EXPECT_TRUE(p.whole_8x8_groups);
  EXPECT_FALSE(p.whole_rows);
  EXPECT_FALSE(p.whole_columns);
  EXPECT_FALSE(p.right_half_only);
  EXPECT_EQ(p.tags(), "[whole 8x8 groups]");
  // A group with one right element is not whole; a single wrong element is no pattern at all.
  EXPECT_FALSE(planted(kShape, kTile, [](int r, int c) {
                 return (r / 8 + c / 8) % 3 == 0 && !(r == 0 && c == 0);
               }).whole_8x8_groups);
  EXPECT_FALSE(
      planted(kShape, kTile, [](int r, int c) { return r == 9 && c == 9; }).whole_8x8_groups);
}

TEST(ErrorPattern, EdgeTilesOnlyIsTheMasking) {
  // Wrong only in the partial last row of tiles (rows 256..299) and column of tiles (256..263).
  const ErrorPattern p =
      planted(kShape, kTile, [](int r, int c) { return (r >= 256 && c % 5 == 0) || c == 260; });
  EXPECT_TRUE(p.edge_tiles_only);
  EXPECT_EQ(p.tags(), "[edge tiles only]");
  // One wrong element inside a full tile: not an edge problem.
  EXPECT_FALSE(planted(kShape, kTile, [](int r, int c) {
                 return c == 260 || (r == 1 && c == 1);
               }).edge_tiles_only);
  // A shape smaller than one tile has no full tile to compare with.
  EXPECT_FALSE(planted({77, 93, 45}, kTile, [](int r, int) { return r == 76; }).edge_tiles_only);
}

TEST(ErrorPattern, UnwrittenAndAllWrong) {
  const ErrorPattern nan = planted(
      kShape, kTile, [](int r, int) { return r == 299; }, /*unwritten=*/true);
  EXPECT_EQ(nan.unwritten, 264);
  EXPECT_EQ(nan.wrong, 264);
  EXPECT_EQ(nan.tags(), "[unwritten] [edge tiles only] [whole rows]");
  const ErrorPattern all = planted(kShape, kTile, [](int, int) { return true; });
  EXPECT_TRUE(all.all_wrong);
  EXPECT_EQ(all.tags(), "[all wrong]") << "every other tag holds trivially and is left out";
  // Without a tile, no tile-relative tags.
  EXPECT_EQ(planted(kShape, {}, [](int, int c) { return c % 128 >= 64; }).tags(),
            "[whole 8x8 groups] [whole columns]");
}

TEST(ErrorPattern, CompareGemmReportsThePattern) {
  const GemmProblem p = random_problem({40, 24, 16}, 7);
  const Reference r = reference_gemm(p, false);
  std::vector<float> got(r.c.begin(), r.c.end());
  for (int c = 0; c < 24; ++c) got[39 * 24 + c] = std::numeric_limits<float>::quiet_NaN();
  const Comparison result = compare_gemm(got, r, p.shape, 1.0, {32, 32});
  EXPECT_EQ(result.bad, 24);
  EXPECT_EQ(result.pattern, "[unwritten] [whole rows]") << result.first;
}

TEST(ErrorPattern, RefusesMismatchedSizes) {
  const std::vector<std::uint8_t> wrong(10, 0);
  const std::vector<float> got(12, 1.0f);
  testing::expect_error(
      [&] {
        describe_errors(wrong, got, {3, 4, 1}, {});
      },
      {"describe_errors", "10 flags and 12 outputs", "3x4"});
}

}  // namespace
}  // namespace book::gemm_cuda
