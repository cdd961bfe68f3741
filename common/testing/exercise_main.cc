// The main of every graded test (`exercise_test` links it instead of gtest_main): gtest with the
// ExerciseReporter, and two rules gtest alone does not have:
//  - a test binary with an exercise not started exits with status 1, so Bazel never reports an
//    untouched stub as PASSED (the log says "not started" and how to start);
//  - under `bazel test`, every exercise the binary grades must have an entry in its chapter's
//    catalog (tests/NN_slug/exercises.txt) that names this test target, or the test fails:
//    the progress tool and the exercise page are built from those entries.
#include <gtest/gtest.h>
#include <pthread.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "common/check.h"
#include "common/exercise_catalog.h"
#include "common/testing/exercise_reporter.h"

namespace {

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

// This chapter's catalog, from the runfiles (exercise_test makes it a data dependency). Outside
// `bazel test` (no TEST_TARGET) there is none, and the checks below are skipped.
std::vector<book::Exercise> load_catalog(const std::string& target, std::string& problem) {
  const std::string chapter = book::testing::chapter_of_test_target(target);
  if (chapter.empty()) return {};
  const std::string relative = "tests/" + chapter + "/exercises.txt";
  const std::filesystem::path path =
      std::filesystem::path(env("TEST_SRCDIR")) / env("TEST_WORKSPACE") / relative;
  try {
    return book::read_exercise_catalog(path.string());
  } catch (const book::Error& e) {
    problem = std::string(e.what()) + " (every graded test's chapter needs " + relative +
              "; see docs/conventions.md, \"Adding an exercise\")";
    return {};
  }
}

// Problems with the catalog, for the exercises this binary graded; empty when all is well.
std::string check_catalog(
    const std::vector<book::Exercise>& catalog, const std::string& target,
    const std::vector<std::pair<std::string, book::testing::ExerciseOutcome>>& outcomes) {
  std::string problems;
  const std::string file =
      "tests/" + book::testing::chapter_of_test_target(target) + "/exercises.txt";
  for (const auto& [id, outcome] : outcomes) {
    const book::Exercise* entry = nullptr;
    for (const auto& e : catalog)
      if (e.id == id) entry = &e;
    if (entry == nullptr) {
      problems += "exercise " + id + " has no entry in " + file +
                  ": add one (docs/conventions.md, \"Adding an exercise\")\n";
      continue;
    }
    bool listed = false;
    for (const auto& t : entry->tests) listed |= t == target;
    if (!listed)
      problems += entry->where + ": exercise " + id + " is graded by " + target +
                  ", which its 'test =' line does not list\n";
  }
  return problems;
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  std::string catalog_problem;
  const std::string target = env("TEST_TARGET");
  std::vector<book::Exercise> catalog = load_catalog(target, catalog_problem);

  char main_thread[64] = "";
  pthread_getname_np(pthread_self(), main_thread, sizeof main_thread);
  auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
  std::unique_ptr<::testing::TestEventListener> printer(
      listeners.Release(listeners.default_result_printer()));
  auto* reporter = new book::testing::ExerciseReporter(std::move(printer), catalog, main_thread);
  listeners.Append(reporter);  // gtest owns it from here

  int status = RUN_ALL_TESTS();
  if (!target.empty()) {
    if (catalog_problem.empty())
      catalog_problem = check_catalog(catalog, target, reporter->outcomes());
    if (!catalog_problem.empty()) {
      std::cout << "\nThe exercise catalog is not in order:\n" << catalog_problem << std::flush;
      status = 1;
    }
  }
  if (status == 0 && reporter->not_started() > 0) status = 1;
  return status;
}
