// The exercise catalog parser: every key read, every mistake refused with the file and line.
#include "common/exercise_catalog.h"

#include <gtest/gtest.h>

#include "common/testing/expect_error.h"

namespace book {
namespace {

using testing::expect_error;

const char* kPath = "tests/12_dynamic_programming/exercises.txt";

const char* kTwo = R"(# a comment
[dp.115]
problem    = Distinct Subsequences (LeetCode 115)
difficulty = hard
file       = exercises/12_dynamic_programming/edit_distance.cc
section    = The edit family
test       = //tests/12_dynamic_programming:edit_distance_test //tests/12_dynamic_programming:other_test
solution   = solutions/12_dynamic_programming/edit_distance.cc num_distinct
hint       = What does dp[i][0] count?
hint       = A long hint that goes
  on over a continuation line.

[dp.72]
problem    = Edit Distance (LeetCode 72)
difficulty = medium
file       = exercises/12_dynamic_programming/edit_distance.cc
section    = The edit family
test       = //tests/12_dynamic_programming:edit_distance_test
solution   = solutions/12_dynamic_programming/edit_distance.cc
hint       = Replace, delete, insert.
)";

TEST(ExerciseCatalog, ReadsEveryKeyInFileOrder) {
  const auto all = parse_exercise_catalog(kTwo, kPath);
  ASSERT_EQ(all.size(), 2u);
  const Exercise& e = all[0];
  EXPECT_EQ(e.id, "dp.115");
  EXPECT_EQ(e.chapter, "12_dynamic_programming");
  EXPECT_EQ(e.problem, "Distinct Subsequences (LeetCode 115)");
  EXPECT_EQ(e.difficulty, "hard");
  EXPECT_EQ(e.file_list(), "exercises/12_dynamic_programming/edit_distance.cc");
  EXPECT_EQ(e.section, "The edit family");
  ASSERT_EQ(e.tests.size(), 2u);
  EXPECT_EQ(e.tests[1], "//tests/12_dynamic_programming:other_test");
  ASSERT_EQ(e.solutions.size(), 1u);
  EXPECT_EQ(e.solutions[0].file, "solutions/12_dynamic_programming/edit_distance.cc");
  EXPECT_EQ(e.solutions[0].symbol, "num_distinct");
  ASSERT_EQ(e.hints.size(), 2u);
  EXPECT_EQ(e.hints[1], "A long hint that goes on over a continuation line.");
  EXPECT_EQ(e.where, std::string(kPath) + ":2");
  EXPECT_EQ(e.readme(), "chapters/12_dynamic_programming/README.md");
  EXPECT_EQ(all[1].id, "dp.72");
  EXPECT_EQ(all[1].solutions.at(0).symbol, "");
}

std::string with(const std::string& replace, const std::string& by) {
  std::string text = kTwo;
  text.replace(text.find(replace), replace.size(), by);
  return text;
}

TEST(ExerciseCatalog, RefusesMistakesNamingTheLine) {
  expect_error(
      [] { parse_exercise_catalog(with("difficulty = hard", "difficulty = tough"), kPath); },
      {":2", "dp.115", "easy, medium or hard", "tough"});
  expect_error(
      [] { parse_exercise_catalog(with("problem    = Distinct", "problm = Distinct"), kPath); },
      {"unknown key 'problm'", "valid:"});
  expect_error([] { parse_exercise_catalog(with("section    = The edit family\n", ""), kPath); },
               {"dp.115", "exactly one 'section", "got 0"});
  expect_error([] { parse_exercise_catalog(with("[dp.72]", "[dp.115]"), kPath); },
               {"dp.115 appears twice"});
  expect_error(
      [] { parse_exercise_catalog(with("hint       = Replace, delete, insert.", ""), kPath); },
      {"dp.72", "one to three 'hint", "got 0"});
  expect_error(
      [] {
        parse_exercise_catalog(with("//tests/12_dynamic_programming:other_test", "edit_test"),
                               kPath);
      },
      {"//tests/NN_slug:name_test", "'edit_test'"});
  expect_error([] { parse_exercise_catalog(with("# a comment", "just words"), kPath); },
               {":1", "expected 'key = value'"});
  expect_error([] { parse_exercise_catalog(kTwo, "docs/exercises.txt"); },
               {"tests/NN_slug/exercises.txt", "docs/exercises.txt"});
  expect_error([] { parse_exercise_catalog("  indented first\n", kPath); },
               {":1", "continues a value"});
}

TEST(ExerciseCatalog, SeveralFilesAndReferences) {
  const auto all = parse_exercise_catalog(
      with("solution   = solutions/12_dynamic_programming/edit_distance.cc\n",
           "solution = a.h\nsolution = b.cu kernel\n"),
      kPath);
  ASSERT_EQ(all[1].solutions.size(), 2u);
  EXPECT_EQ(all[1].solutions[1].file, "b.cu");
  EXPECT_EQ(all[1].solutions[1].symbol, "kernel");
  const auto two_files = parse_exercise_catalog(
      with("file       = exercises/12_dynamic_programming/edit_distance.cc\nsection    = The edit "
           "family\ntest       = //tests/12_dynamic_programming:edit_distance_test\n",
           "file = x_map.h x.cu\nsection = S\ntest = //tests/12_dynamic_programming:t_test\n"),
      kPath);
  EXPECT_EQ(two_files[1].file_list(), "x_map.h, x.cu");
  expect_error(
      [] {
        parse_exercise_catalog(
            with("solution   = solutions/12_dynamic_programming/edit_distance.cc\n", ""), kPath);
      },
      {"dp.72", "at least one 'solution"});
}

TEST(ExerciseCatalog, FourHintsAreTooMany) {
  expect_error(
      [] {
        parse_exercise_catalog(
            with("hint       = Replace, delete, insert.", "hint = a\nhint = b\nhint = c\nhint = d"),
            kPath);
      },
      {"dp.72", "one to three", "got 4"});
}

TEST(Records, KeepRepeatedKeysAndTheirOrder) {
  const auto records = parse_records("[a]\nx = 1\nx = 2\ny = 3\n[b]\n", "f.txt");
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].all("x"), (std::vector<std::string>{"1", "2"}));
  EXPECT_EQ(records[0].get("y"), "3");
  EXPECT_EQ(records[0].get("z"), "");
  EXPECT_EQ(records[1].name, "b");
  EXPECT_EQ(records[1].where, "f.txt:5");
}

}  // namespace
}  // namespace book
