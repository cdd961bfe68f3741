/// @file
/// The exercise catalog: one small text file per chapter, `tests/NN_slug/exercises.txt` (next to the graded tests), that
/// says for each exercise what the progress tool, the exercise page and the graded tests' failure
/// messages say about it (its problem, difficulty, file, README section, tests, reference and
/// hints). The format is a list of records:
///
/// \code{.unparsed}
/// # a comment
/// [dp.115]
/// problem    = Distinct Subsequences (LeetCode 115)
/// difficulty = hard
/// file       = exercises/12_dynamic_programming/edit_distance.cc
/// section    = The edit family
/// test       = //tests/12_dynamic_programming:edit_distance_test
/// solution   = solutions/12_dynamic_programming/edit_distance.cc num_distinct
/// hint       = What does dp[i][0] count?
/// hint       = A longer hint may go on
///   over indented continuation lines.
/// \endcode
///
/// `file` and `test` may list several, separated by spaces; `solution` may be repeated.
/// docs/conventions.md ("Adding an exercise") documents each key.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace book {

/// One `[name]` record of a record file: its keys and values in file order.
struct Record {
  std::string name;                                         ///< what stood between the brackets
  std::vector<std::pair<std::string, std::string>> fields;  ///< key, value (keys may repeat)
  std::string where;  ///< "path:line" of the `[name]` line, for messages

  /// The values of `key`, in file order (empty when it is absent).
  std::vector<std::string> all(const std::string& key) const;
  /// The one value of `key`, or "" when it is absent.
  std::string get(const std::string& key) const;
};

/// Parses a record file: `[name]` lines start records, `key = value` lines fill them, lines
/// indented by whitespace continue the previous value (joined with one space), `#` starts a
/// comment line. `path` is used in messages only.
/// @throws book::Error naming the file and line of a line that is none of these.
std::vector<Record> parse_records(std::string_view text, const std::string& path);

/// One exercise, as its chapter's catalog describes it.
struct Exercise {
  std::string id;       ///< e.g. "dp.115"
  std::string chapter;  ///< the chapter folder, e.g. "12_dynamic_programming"
  std::string
      problem;  ///< what to write, in a few words, e.g. "Distinct Subsequences (LeetCode 115)"
  std::string difficulty;          ///< "easy", "medium" or "hard"
  std::vector<std::string> files;  ///< the files the reader edits, from the repository root
  std::string section;  ///< the README heading that explains it, as written (without `{#label}`)
  std::vector<std::string>
      tests;  ///< the graded test targets, e.g. "//tests/12_...:edit_distance_test"
  /// Where the reference body is: a file from the repository root and, optionally, a
  /// `//! [name]` snippet or a function in it ("" = the whole file).
  struct Reference {
    std::string file;    ///< e.g. "solutions/12_dynamic_programming/edit_distance.cc"
    std::string symbol;  ///< e.g. "num_distinct", or ""
  };
  std::vector<Reference> solutions;  ///< one or more (an exercise may span files)
  std::vector<std::string> hints;    ///< one to three, revealed one at a time
  std::string where;                 ///< "path:line" of its record

  /// "chapters/12_dynamic_programming/README.md".
  std::string readme() const { return "chapters/" + chapter + "/README.md"; }
  /// The files to edit, joined with ", ".
  std::string file_list() const;
};

/// Parses one chapter's catalog. `path` must be `tests/NN_slug/exercises.txt` (possibly after
/// a leading folder): the chapter is read from it.
/// @throws book::Error naming the file and line of a missing or unknown key, a bad difficulty,
///   a duplicate ID, no hint or more than three, or a test label that is not `//tests/...:name`.
std::vector<Exercise> parse_exercise_catalog(std::string_view text, const std::string& path);

/// Reads and parses the catalog at `path` (as parse_exercise_catalog).
/// @throws book::Error when the file cannot be read, or as parse_exercise_catalog.
std::vector<Exercise> read_exercise_catalog(const std::string& path);

/// Every catalog under `root`/tests, in chapter order, each chapter's exercises in file
/// order (the order a reader is meant to take them in).
/// @throws book::Error as read_exercise_catalog, or for an ID that two chapters both use.
std::vector<Exercise> read_all_exercise_catalogs(const std::string& root);

}  // namespace book
