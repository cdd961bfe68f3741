#include "chapters/02_gemm_cuda/error_pattern.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "common/check.h"

namespace book::gemm_cuda {

std::string ErrorPattern::tags() const {
  std::string out;
  auto add = [&](bool on, const char* tag) {
    if (!on) return;
    if (!out.empty()) out += ' ';
    out += tag;
  };
  add(unwritten > 0, error_tags::kUnwritten);
  add(all_wrong, error_tags::kAllWrong);
  add(edge_tiles_only, error_tags::kEdgeTiles);
  add(right_half_only, error_tags::kRightHalf);
  add(whole_8x8_groups, error_tags::kGroups8x8);
  add(whole_rows, error_tags::kWholeRows);
  add(whole_columns, error_tags::kWholeColumns);
  return out;
}

ErrorPattern describe_errors(std::span<const std::uint8_t> wrong, std::span<const float> got,
                             GemmShape s, TileSize tile) {
  const std::size_t elements = std::size_t(s.m) * std::size_t(s.n);
  BOOK_CHECK(s.m > 0 && s.n > 0 && wrong.size() == elements && got.size() == elements,
             "describe_errors: " << wrong.size() << " flags and " << got.size() << " outputs for a "
                                 << s.m << "x" << s.n << " C");
  ErrorPattern p;
  auto bad = [&](int r, int c) { return wrong[std::size_t(r) * s.n + c] != 0; };
  std::vector<int> per_row(s.m, 0), per_col(s.n, 0);
  for (int r = 0; r < s.m; ++r)
    for (int c = 0; c < s.n; ++c)
      if (bad(r, c)) {
        ++p.wrong, ++per_row[r], ++per_col[c];
        if (std::isnan(got[std::size_t(r) * s.n + c])) ++p.unwritten;
      }
  if (p.wrong == 0) return p;
  p.all_wrong = p.wrong == std::int64_t(elements);
  if (p.all_wrong) return p;  // every other tag would hold trivially

  p.whole_rows = p.whole_columns = true;
  for (int r = 0; r < s.m; ++r)
    p.whole_rows = p.whole_rows && (per_row[r] == 0 || per_row[r] == s.n);
  for (int c = 0; c < s.n; ++c)
    p.whole_columns = p.whole_columns && (per_col[c] == 0 || per_col[c] == s.m);

  // Aligned 8 × 8 groups (clipped at the matrix's edges): all wrong or all right. A single wrong
  // element is not a pattern: ask for at least one group with more than one element.
  p.whole_8x8_groups = true;
  bool any_group_of_many = false;
  for (int r0 = 0; r0 < s.m && p.whole_8x8_groups; r0 += 8)
    for (int c0 = 0; c0 < s.n && p.whole_8x8_groups; c0 += 8) {
      int count = 0, size = 0;
      for (int r = r0; r < std::min(r0 + 8, s.m); ++r)
        for (int c = c0; c < std::min(c0 + 8, s.n); ++c) ++size, count += bad(r, c);
      if (count != 0 && count != size) p.whole_8x8_groups = false;
      if (count > 1) any_group_of_many = true;
    }
  p.whole_8x8_groups = p.whole_8x8_groups && any_group_of_many;

  if (tile.rows > 0 && tile.cols > 0) {
    const int full_rows = s.m / tile.rows * tile.rows, full_cols = s.n / tile.cols * tile.cols;
    p.edge_tiles_only = full_rows > 0 && full_cols > 0;
    p.right_half_only = tile.cols >= 2;
    for (int r = 0; r < s.m; ++r)
      for (int c = 0; c < s.n; ++c) {
        if (!bad(r, c)) continue;
        if (r < full_rows && c < full_cols) p.edge_tiles_only = false;
        if (c % tile.cols < tile.cols / 2) p.right_half_only = false;
      }
  }
  return p;
}

}  // namespace book::gemm_cuda
