/// @file
/// How graded tests meet exercises: a stub's NotImplemented becomes a skip ("not started").
#pragma once

#include <gtest/gtest.h>

#include <functional>

#include "common/check.h"

namespace book::testing {

/// Runs `body` as the test of exercise `exercise_id`. The ID is recorded in the test's XML (the
/// progress tool reads it); a NotImplemented thrown by a stub marks the test skipped, so an
/// unstarted exercise reads "not started", never "failed", and never "passed".
inline void run_exercise(const char* exercise_id, const std::function<void()>& body) {
  ::testing::Test::RecordProperty("exercise", exercise_id);
  try {
    body();
  } catch (const ::book::NotImplemented& not_started) {
    GTEST_SKIP() << not_started.what();
  }
}

}  // namespace book::testing

/// Defines a graded test of one exercise:
/// `EXERCISE_TEST("dp.115", DistinctSubsequences, MatchesBruteForce) { ... EXPECT_EQ ... }`
#define EXERCISE_TEST(exercise_id, suite, name)                                          \
  static void suite##_##name##_exercise_body();                                          \
  TEST(suite, name) { ::book::testing::run_exercise(exercise_id, suite##_##name##_exercise_body); } \
  static void suite##_##name##_exercise_body()
