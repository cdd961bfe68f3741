/// @file
/// What a graded test prints: gtest's own output, with each failing exercise named (ID, problem,
/// README section, how to get a hint), the thread that failed when it is not the main one (a
/// rank, for collectives), at most three failures per test shown in full, and at the end one line
/// per exercise: done, failing, not started. Installed by the graded tests' main
/// (`//common:exercise_main`, which `exercise_test` links).
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/exercise_catalog.h"

namespace book::testing {

/// How one exercise fared in one test binary: every case of it passed, one failed, or (with none
/// failed) one was not started.
enum class ExerciseOutcome { kDone, kFailing, kNotStarted, kNeedsGpu, kNotSelected };

/// The chapter folder a graded test target belongs to: "//tests/12_dynamic_programming:x_test"
/// -> "12_dynamic_programming"; "" for a label outside //tests/.
std::string chapter_of_test_target(const std::string& label);

/// The lines printed after the tests: one per exercise (in the order given), then what to do.
/// `catalog` may be empty (the test ran outside Bazel); then only IDs are printed.
std::string exercise_summary(const std::vector<std::pair<std::string, ExerciseOutcome>>& outcomes,
                             const std::vector<Exercise>& catalog);

/// The gtest listener that wraps gtest's default printer (see the file comment).
class ExerciseReporter : public ::testing::TestEventListener {
 public:
  /// Failures shown in full per test; the rest are counted.
  static constexpr int kShownFailures = 3;

  /// Wraps `printer` (gtest's default result printer, released from the listener list).
  /// `catalog`: this chapter's exercises (may be empty). `main_thread_name`: the name of the
  /// thread that runs the tests, so failures on other threads can be told apart.
  ExerciseReporter(std::unique_ptr<::testing::TestEventListener> printer,
                   std::vector<Exercise> catalog, std::string main_thread_name);

  /// Exercises with a case not started, after the run.
  int not_started() const;
  /// The per-exercise outcomes, in the order the exercises were first seen.
  std::vector<std::pair<std::string, ExerciseOutcome>> outcomes() const;

  /// \cond INTERNAL
  void OnTestProgramStart(const ::testing::UnitTest& u) override {
    printer_->OnTestProgramStart(u);
  }
  void OnTestIterationStart(const ::testing::UnitTest& u, int i) override {
    printer_->OnTestIterationStart(u, i);
  }
  void OnEnvironmentsSetUpStart(const ::testing::UnitTest& u) override {
    printer_->OnEnvironmentsSetUpStart(u);
  }
  void OnEnvironmentsSetUpEnd(const ::testing::UnitTest& u) override {
    printer_->OnEnvironmentsSetUpEnd(u);
  }
  void OnTestSuiteStart(const ::testing::TestSuite& s) override { printer_->OnTestSuiteStart(s); }
#ifndef GTEST_REMOVE_LEGACY_TEST_CASEAPI_
  void OnTestCaseStart(const ::testing::TestCase& s) override { printer_->OnTestCaseStart(s); }
  void OnTestCaseEnd(const ::testing::TestCase& s) override { printer_->OnTestCaseEnd(s); }
#endif
  void OnTestDisabled(const ::testing::TestInfo& info) override { printer_->OnTestDisabled(info); }
  void OnTestStart(const ::testing::TestInfo& info) override;
  void OnTestPartResult(const ::testing::TestPartResult& result) override;
  void OnTestEnd(const ::testing::TestInfo& info) override;
  void OnTestSuiteEnd(const ::testing::TestSuite& s) override { printer_->OnTestSuiteEnd(s); }
  void OnEnvironmentsTearDownStart(const ::testing::UnitTest& u) override {
    printer_->OnEnvironmentsTearDownStart(u);
  }
  void OnEnvironmentsTearDownEnd(const ::testing::UnitTest& u) override {
    printer_->OnEnvironmentsTearDownEnd(u);
  }
  void OnTestIterationEnd(const ::testing::UnitTest& u, int i) override;
  void OnTestProgramEnd(const ::testing::UnitTest& u) override { printer_->OnTestProgramEnd(u); }
  /// \endcond

 private:
  const Exercise* find(const std::string& id) const;

  std::unique_ptr<::testing::TestEventListener> printer_;
  std::vector<Exercise> catalog_;
  std::string main_thread_name_;
  mutable std::mutex mutex_;
  int failures_in_test_ = 0;
  const ::testing::TestInfo* current_ = nullptr;    // the test running now
  std::vector<std::string> order_;                  // exercises, first seen first
  std::map<std::string, ExerciseOutcome> outcome_;  // per exercise
};

}  // namespace book::testing
