// expect_error passes only for a book::Error carrying every substring, and otherwise reports a
// failure that says what went wrong.
#include "common/testing/expect_error.h"

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <stdexcept>

#include "common/check.h"

namespace book {
namespace {

using testing::expect_error;

void throw_book_error() { throw Error("--ranks must be in 1..64, got 0"); }

TEST(ExpectError, PassesWhenEverySubstringIsInTheMessage) {
  expect_error(throw_book_error, "must be in 1..64");
  expect_error(throw_book_error, {"--ranks", "got 0"});
  expect_error(throw_book_error, std::vector<std::string>{"1..64", "--ranks"});
  expect_error([] { BOOK_CHECK(false, "n = " << 5); }, "n = 5");
}

TEST(ExpectError, FailsWhenASubstringIsMissingAndShowsTheMessage) {
  EXPECT_NONFATAL_FAILURE(expect_error(throw_book_error, "got 65"), "lacks \"got 65\"");
  EXPECT_NONFATAL_FAILURE(expect_error(throw_book_error, {"--ranks", "got 65"}),
                          "--ranks must be in 1..64, got 0");
}

TEST(ExpectError, FailsWhenNothingIsThrown) {
  EXPECT_NONFATAL_FAILURE(expect_error([] {}, "anything"), "nothing was thrown");
}

TEST(ExpectError, FailsOnAnotherExceptionTypeNamingItAndItsMessage) {
  EXPECT_NONFATAL_FAILURE(expect_error([] { throw std::invalid_argument("stoi"); }, "stoi"),
                          "invalid_argument");
  EXPECT_NONFATAL_FAILURE(expect_error([] { throw std::invalid_argument("stoi"); }, "stoi"),
                          "\"stoi\"");
  EXPECT_NONFATAL_FAILURE(expect_error([] { throw 42; }, "42"), "not a std::exception");
}

TEST(ExpectError, LetsAStubsNotImplementedThrough) {
  EXPECT_THROW(expect_error([] { BOOK_NOT_IMPLEMENTED("dp.1", "f.cc", "README"); }, "x"),
               NotImplemented)
      << "a graded test of an unstarted exercise must read as skipped, not as a wrong message";
}

}  // namespace
}  // namespace book
