/// @file
/// The one way the book's tests check a refusal: the call must throw a book::Error whose message
/// contains the words a reader needs (the bad value, what to do).
#pragma once

#include <gtest/gtest.h>

#include <exception>
#include <functional>
#include <initializer_list>
#include <string>
#include <typeinfo>
#include <vector>

#include "common/check.h"

namespace book::testing {

/// Runs `fn` and adds a (non-fatal) test failure unless it throws a book::Error whose what()
/// contains every one of `substrings`. A failure names what was missing and the whole message,
/// or the other exception's type and message, or says that nothing was thrown.
///
/// A book::NotImplemented from an exercise stub is rethrown, so a graded test of an unstarted
/// exercise reads as skipped ("not started"), never as passed or as a wrong message.
inline void expect_error(const std::function<void()>& fn,
                         const std::vector<std::string>& substrings) {
  try {
    fn();
  } catch (const NotImplemented&) {
    throw;
  } catch (const Error& error) {
    const std::string message = error.what();
    for (const auto& substring : substrings)
      if (message.find(substring) == std::string::npos)
        ADD_FAILURE() << "the book::Error's message lacks \"" << substring << "\"\n  message: \""
                      << message << "\"";
    return;
  } catch (const std::exception& other) {
    ADD_FAILURE() << "expected a book::Error, got a " << typeid(other).name() << ": \""
                  << other.what() << "\"";
    return;
  } catch (...) {
    ADD_FAILURE() << "expected a book::Error, got an exception that is not a std::exception";
    return;
  }
  ADD_FAILURE() << "expected a book::Error, nothing was thrown";
}

/// The same with one substring: `expect_error([&] { f(-1); }, "must be positive, got -1")`.
inline void expect_error(const std::function<void()>& fn, const std::string& substring) {
  expect_error(fn, std::vector<std::string>{substring});
}

/// The same with a braced list: `expect_error([&] { f(-1); }, {"-1", "must be positive"})`.
/// (Without this overload `{"a", "b"}` could also read as std::string's iterator-pair
/// constructor.)
inline void expect_error(const std::function<void()>& fn,
                         std::initializer_list<std::string> substrings) {
  expect_error(fn, std::vector<std::string>(substrings));
}

}  // namespace book::testing
