/// @file
/// How graded tests meet exercises: a stub's NotImplemented becomes a skip ("not started"), and
/// the ID and the build's track are recorded in the test's XML for the progress tool.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <string>

#include "common/check.h"
#include "common/track.h"

namespace book::testing {

/// Runs `body` as the test of exercise `exercise_id`. The ID and the track ("exercises" or
/// "solutions") are recorded in the test's XML (the progress tool reads both); a NotImplemented
/// thrown by a stub marks the test skipped, so an unstarted exercise reads "not started", never
/// "failed", and never "passed" (the graded tests' main then exits with status 1, so Bazel does
/// not call the target passed either). With the environment variable BOOK_EXERCISE set to
/// another ID the test is skipped as "not selected": `bazel run //tools:progress -- dp.115`
/// runs one exercise's tests that way.
inline void run_exercise(const char* exercise_id, const std::function<void()>& body) {
  ::testing::Test::RecordProperty("exercise", exercise_id);
  ::testing::Test::RecordProperty("track", ::book::track_name());
  const char* only = std::getenv("BOOK_EXERCISE");
  if (only != nullptr && *only != '\0' && std::string(only) != exercise_id)
    GTEST_SKIP() << "not selected (BOOK_EXERCISE=" << only << ")";
  try {
    body();
  } catch (const ::book::NotImplemented& not_started) {
    GTEST_SKIP() << not_started.what();
  }
}

}  // namespace book::testing

/// Defines a graded test of one exercise:
/// `EXERCISE_TEST("dp.115", DistinctSubsequences, MatchesBruteForce) { ... EXPECT_EQ ... }`
#define EXERCISE_TEST(exercise_id, suite, name)                                 \
  static void suite##_##name##_exercise_body();                                 \
  TEST(suite, name) {                                                           \
    ::book::testing::run_exercise(exercise_id, suite##_##name##_exercise_body); \
  }                                                                             \
  static void suite##_##name##_exercise_body()
