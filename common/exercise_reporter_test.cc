// The graded tests' summary: what each outcome prints, and the chapter of a test target.
#include "common/testing/exercise_reporter.h"

#include <gtest/gtest.h>

namespace book::testing {
namespace {

TEST(ExerciseReporter, ChapterOfATestTarget) {
  EXPECT_EQ(chapter_of_test_target("//tests/12_dynamic_programming:edit_distance_test"),
            "12_dynamic_programming");
  EXPECT_EQ(chapter_of_test_target("//tests/03_collectives/sub:ring_test"), "03_collectives");
  EXPECT_EQ(chapter_of_test_target("//common:common_test"), "");
}

TEST(ExerciseReporter, SummaryNamesEachExerciseAndWhatToDo) {
  Exercise e;
  e.id = "dp.115";
  e.chapter = "12_dynamic_programming";
  e.problem = "Distinct Subsequences";
  e.files = {"exercises/12_dynamic_programming/edit_distance.cc"};
  e.section = "The edit family";
  Exercise f = e;
  f.id = "dp.72";
  f.problem = "Edit Distance";
  const std::string text = exercise_summary({{"dp.115", ExerciseOutcome::kNotStarted},
                                             {"dp.72", ExerciseOutcome::kFailing},
                                             {"dp.583", ExerciseOutcome::kDone}},
                                            {e, f});
  EXPECT_NE(text.find("not started   dp.115  Distinct Subsequences (write it in "
                      "exercises/12_dynamic_programming/edit_distance.cc)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("FAILING       dp.72   Edit Distance (read "
                      "chapters/12_dynamic_programming/README.md, section \"The edit family\")"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("done          dp.583\n"), std::string::npos) << text;
  EXPECT_NE(text.find("1 exercise is not started"), std::string::npos) << text;
  EXPECT_NE(text.find("(solutions track: the reference solutions"), std::string::npos) << text;
}

TEST(ExerciseReporter, NoNotStartedLineWhenAllAreWritten) {
  const std::string text = exercise_summary({{"x.1", ExerciseOutcome::kDone}}, {});
  EXPECT_EQ(text.find("not started"), std::string::npos) << text;
}

}  // namespace
}  // namespace book::testing
