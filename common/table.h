/// @file
/// Result tables: printed as Markdown (so a run pastes straight into a README), and written as
/// CSV (for gnuplot) and JSON (for the docs and the tour).
#pragma once

#include <string>
#include <vector>

namespace book {

/// Formats `value` with `digits` digits after the point.
std::string fixed(double value, int digits = 2);

/// A table of strings with named columns.
class Table {
 public:
  /// A table with these column headings.
  explicit Table(std::vector<std::string> columns);

  /// Appends one row; it must have one cell per column.
  void add_row(std::vector<std::string> cells);

  /// The Markdown text: a header row, a separator, then the rows, with aligned columns.
  std::string markdown() const;

  /// Writes the table as CSV (header line, then one line per row).
  void write_csv(const std::string& path) const;

  /// Writes the table as a JSON array of objects, one per row, keyed by column name. Cells that
  /// parse fully as numbers are written as numbers.
  void write_json(const std::string& path) const;

  /// Column headings.
  const std::vector<std::string>& columns() const { return columns_; }
  /// Rows, each with one cell per column.
  const std::vector<std::vector<std::string>>& rows() const { return rows_; }

 private:
  std::vector<std::string> columns_;
  std::vector<std::vector<std::string>> rows_;
};

/// The folder where stages write their results (CSV, JSON, plots): $BOOK_RESULTS_DIR if set,
/// otherwise `results/` under the directory `bazel run` was started from. Created if missing, and
/// checked to be writable (a file is created in it and removed). Throws book::Error saying which
/// folder and why when it cannot be created or written: call it before a long run, not after.
std::string results_dir();

/// Runs gnuplot on `script` (which draws `picture` from `data`) and returns the line a stage
/// prints: "plot: PICTURE", or, where gnuplot is missing or fails, what happened and where the
/// data are, so a stage without a picture still says where its numbers went.
std::string run_gnuplot(const std::string& script, const std::string& picture,
                        const std::string& data);

}  // namespace book
