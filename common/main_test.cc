// The main guard: each kind of exception becomes its documented exit status and one line on
// stderr; --help prints to stdout and succeeds; stdout is line-buffered.
#include "common/main.h"

#include <gtest/gtest.h>

#include <stdio_ext.h>  // __flbf (glibc): whether a stream is line-buffered

#include <cstdlib>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/check.h"
#include "common/flags.h"

namespace book {
namespace {

struct Result {
  int status;
  std::string out;
  std::string err;
};

// Runs `body` under run_main as the program at `path`, capturing what it prints.
Result run(const std::function<int(int, char**)>& body, std::vector<std::string> args = {},
           std::string path = "/some/folder/stage") {
  std::vector<char*> argv = {path.data()};
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  const int status = run_main(static_cast<int>(argv.size()) - 1, argv.data(), body);
  Result result{status, "", ""};
  result.err = ::testing::internal::GetCapturedStderr();
  result.out = ::testing::internal::GetCapturedStdout();
  return result;
}

TEST(RunMain, PassesArgumentsAndReturnsTheBodysStatus) {
  const Result r = run(
      [](int argc, char** argv) {
        EXPECT_EQ(argc, 3);
        EXPECT_STREQ(argv[1], "a");
        EXPECT_STREQ(argv[2], "--b=1");
        std::printf("hello\n");
        return 7;
      },
      {"a", "--b=1"});
  EXPECT_EQ(r.status, 7);
  EXPECT_EQ(r.out, "hello\n");
  EXPECT_EQ(r.err, "");
}

TEST(RunMain, LineBuffersStdout) {
  run([](int, char**) {
    EXPECT_NE(__flbf(stdout), 0) << "stdout must be line-buffered while the body runs";
    return 0;
  });
}

TEST(RunMain, HelpGoesToStdoutAndSucceeds) {
  const Result r = run(
      [](int argc, char** argv) {
        int steps = 5;
        Flags flags("stage", "does the stage");
        flags.add("steps", &steps, "how many");
        flags.parse(argc, argv);
        ADD_FAILURE() << "parse returned after --help";
        return 9;
      },
      {"--help"});
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("usage: stage [flags]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--steps=<integer>"), std::string::npos) << r.out;
  EXPECT_EQ(r.err, "");
}

TEST(RunMain, UsageErrorIsOneLineAndExitCode2) {
  const Result r = run(
      [](int argc, char** argv) {
        int steps = 5;
        Flags flags("stage", "does the stage");
        flags.add("steps", &steps, "how many");
        flags.parse(argc, argv);
        return 0;
      },
      {"--steps", "abc"});
  EXPECT_EQ(r.status, kExitBadInput);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "stage: error: --steps expects an integer, got 'abc'\n");
}

TEST(RunMain, BookErrorIsOneLineWithoutTheSourceLocation) {
  unsetenv("BOOK_DEBUG");
  const Result r = run([](int, char**) -> int {
    const int n = -3;
    BOOK_CHECK(n > 0, "n must be positive, got " << n);
    return 0;
  });
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "stage: error: n must be positive, got -3\n");
}

TEST(RunMain, BookDebugAddsTheSourceLocation) {
  setenv("BOOK_DEBUG", "1", 1);
  const Result r = run([](int, char**) -> int {
    BOOK_CHECK(false, "broken");
    return 0;
  });
  unsetenv("BOOK_DEBUG");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("stage: error: broken (at "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("main_test.cc:"), std::string::npos) << r.err;
}

TEST(RunMain, NotImplementedNamesTheExerciseAndExitCode3) {
  const Result r = run([](int, char**) -> int {
    BOOK_NOT_IMPLEMENTED("dp.115", "exercises/12/x.cc", "README, section 115");
  });
  EXPECT_EQ(r.status, kExitNotStarted);
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err,
            "stage: exercise dp.115 is not started: write it in exercises/12/x.cc (read README, "
            "section 115)\n");
}

TEST(RunMain, OtherExceptionsAreInternalErrorsWithExitCode1) {
  const Result r = run([](int, char**) -> int { throw std::out_of_range("vector::at"); });
  EXPECT_EQ(r.status, kExitInternalError);
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "stage: internal error: vector::at\n");
  const Result odd = run([](int, char**) -> int { throw 42; });
  EXPECT_EQ(odd.status, 1);
  EXPECT_NE(odd.err.find("stage: internal error:"), std::string::npos) << odd.err;
}

// Issue 36: settings far too large for memory ended in "internal error: std::bad_alloc".
TEST(RunMain, OutOfMemoryIsABadInputErrorThatSaysSo) {
  const Result r = run([](int, char**) -> int { throw std::bad_alloc(); });
  EXPECT_EQ(r.status, kExitBadInput);
  EXPECT_NE(r.err.find("stage: error: out of memory"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("GiB physical"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("smaller sizes"), std::string::npos) << r.err;
}

TEST(RunMain, ProgramNameIsTheLastPathComponent) {
  const auto fail = [](int, char**) -> int { throw Error("x"); };
  EXPECT_EQ(run(fail, {}, "busbw").err, "busbw: error: x\n");
  EXPECT_EQ(run(fail, {}, "./bazel-bin/chapters/03/busbw").err, "busbw: error: x\n");
  EXPECT_EQ(run(fail, {}, "").err, "program: error: x\n");
}

TEST(RunMain, StdoutWrittenBeforeTheErrorIsKept) {
  const Result r = run([](int, char**) -> int {
    std::printf("partial table\n");
    throw Error("then it failed");
  });
  EXPECT_EQ(r.out, "partial table\n");
  EXPECT_EQ(r.err, "stage: error: then it failed\n");
}

}  // namespace
}  // namespace book
