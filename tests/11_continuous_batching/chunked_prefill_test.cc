// Graded tests of serve.chunked_prefill: as much as fits with chunking, all or nothing without.
#include <gtest/gtest.h>

#include "chapters/11_continuous_batching/chunked_prefill.h"
#include "common/testing/exercise.h"
#include "common/testing/expect_error.h"

namespace book::serve {
namespace {

using book::testing::expect_error;

SchedulerConfig chunked(bool on) {
  SchedulerConfig config;
  config.chunked_prefill = on;
  return config;
}

EXERCISE_TEST("serve.chunked_prefill", ChunkedPrefill, ChunkingTakesWhatFits) {
  struct Case {
    int remaining, budget, want;
  };
  for (const Case c : {Case{100, 37, 37},
                       {37, 100, 37},
                       {37, 37, 37},
                       {1, 1, 1},
                       {513, 512, 512},
                       {5, 0, 0},
                       {5, -3, 0}}) {
    EXPECT_EQ(chunked_prefill(c.remaining, c.budget, chunked(true)), c.want)
        << "remaining " << c.remaining << ", budget left " << c.budget << ", chunked";
  }
}

EXERCISE_TEST("serve.chunked_prefill", ChunkedPrefill, WithoutChunkingAllOrNothing) {
  struct Case {
    int remaining, budget, want;
  };
  for (const Case c :
       {Case{100, 37, 0}, {37, 100, 37}, {37, 37, 37}, {38, 37, 0}, {1, 1, 1}, {5, 0, 0}}) {
    EXPECT_EQ(chunked_prefill(c.remaining, c.budget, chunked(false)), c.want)
        << "remaining " << c.remaining << ", budget left " << c.budget << ", not chunked";
  }
}

EXERCISE_TEST("serve.chunked_prefill", ChunkedPrefill, NothingToPrefillIsAnError) {
  expect_error([] { chunked_prefill(0, 10, chunked(true)); }, {"remaining", "0"});
  expect_error([] { chunked_prefill(-2, 10, chunked(false)); }, {"remaining", "-2"});
}

}  // namespace
}  // namespace book::serve
