/// @file
/// Where the wrong elements of a GEMM's output are, in words a reader (or tools/gpu/run.sh) can
/// match to a cause: never written (the NaN poison survived), only in the partial tiles at the
/// edges, only in the right half of each tile, in whole aligned 8 × 8 groups, in whole rows or
/// whole columns. A failing GPU check prints these tags next to its first wrong element, so the
/// first run on a GPU says not only *that* a rung is wrong but *what kind of* wrong. Plain C++.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "chapters/02_gemm_cuda/schedule.h"

namespace book::gemm_cuda {

/// A block tile of C (rows × columns) that the pattern is read against; 0 × 0 for none.
struct TileSize {
  int rows = 0;  ///< Rows of C per block.
  int cols = 0;  ///< Columns of C per block.
};

/// The tags of describe_errors(), as printed; tools/gpu/run.sh matches them to diagnosis hints.
namespace error_tags {
inline constexpr const char* kUnwritten = "[unwritten]";        ///< some wrong elements are NaN
inline constexpr const char* kAllWrong = "[all wrong]";         ///< every element is wrong
inline constexpr const char* kEdgeTiles = "[edge tiles only]";  ///< only partial tiles
inline constexpr const char* kRightHalf = "[right half of tile only]";  ///< tile columns ≥ cols/2
inline constexpr const char* kGroups8x8 = "[whole 8x8 groups]";         ///< aligned 8 × 8 groups
inline constexpr const char* kWholeRows = "[whole rows]";               ///< each wrong row entirely
inline constexpr const char* kWholeColumns = "[whole columns]";  ///< each wrong column entirely
}  // namespace error_tags

/// The shape of the set of wrong elements.
struct ErrorPattern {
  std::int64_t wrong = 0;      ///< Wrong elements (NaN and infinities included).
  std::int64_t unwritten = 0;  ///< Of those, NaN: the poison was never overwritten.
  bool all_wrong = false;      ///< Every element of C is wrong.
  /// Every wrong element lies in a tile that sticks out of C (the last row or column of tiles of
  /// a ragged shape), and some full tile exists that is right: the masking at the edges.
  bool edge_tiles_only = false;
  /// Every wrong element is in columns ≥ tile.cols / 2 of its tile (for rung 10: the second B
  /// box, read through the B descriptor's leading-dimension offset).
  bool right_half_only = false;
  /// Every aligned 8-row × 8-column group that holds a wrong element is wrong entirely (and not
  /// everything is wrong): a 16-byte chunk of 8 rows read from the wrong place.
  bool whole_8x8_groups = false;
  /// Every row that holds a wrong element is wrong in every column (the A side).
  bool whole_rows = false;
  /// Every column that holds a wrong element is wrong in every row (the B side).
  bool whole_columns = false;

  /// The tags that hold, e.g. "[unwritten] [edge tiles only]"; empty when nothing is wrong.
  std::string tags() const;
};

/// Reads the pattern of `wrong` (one flag per element of the m × n row-major C, non-zero where
/// the element is wrong) in `got` (the output, for telling NaN apart) against `tile` (0 × 0: no
/// tile-relative tags). Throws book::Error if the sizes are not m · n.
ErrorPattern describe_errors(std::span<const std::uint8_t> wrong, std::span<const float> got,
                             GemmShape shape, TileSize tile);

}  // namespace book::gemm_cuda
