/// @file
/// Errors and checks shared by every chapter.
///
/// The book's public functions validate their arguments and throw `book::Error` with a message
/// a reader can act on: what was wrong, the value seen, and what to do. Checks stay on in
/// optimised builds because wrong answers are worse than slow ones.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace book {

/// The one exception type the book throws for bad input or failed invariants.
///
/// what() is exactly the message a user reads; where the check sits in the source is kept apart
/// in location(), which `book::run_main` prints only when the environment variable BOOK_DEBUG is
/// set (a reader of a stage's output needs the value and what to do, not a file name).
class Error : public std::runtime_error {
 public:
  /// An error whose what() is `message`; `location` ("file.cc:42") says where it was raised.
  explicit Error(const std::string& message, std::string location = "")
      : std::runtime_error(message), location_(std::move(location)) {}

  /// "file:line" of the check that threw, or empty when the thrower did not say.
  const std::string& location() const { return location_; }

 private:
  std::string location_;
};

/// Thrown by an exercise stub that the reader has not written yet.
///
/// Graded tests turn it into a skip ("not started"), never a failure, so a fresh checkout of the
/// exercise track is all skips and each finished exercise turns into a pass.
class NotImplemented : public Error {
 public:
  /// @param exercise_id the exercise's ID, e.g. "dp.115"
  /// @param file the file the reader edits, relative to the repository root
  /// @param section the README section that explains it
  NotImplemented(std::string exercise_id, std::string file, std::string section)
      : Error("exercise " + exercise_id + " is not started: write it in " + file + " (read " +
              section + ")"),
        exercise_id_(std::move(exercise_id)) {}

  /// The exercise's ID, e.g. "dp.115".
  const std::string& exercise_id() const { return exercise_id_; }

 private:
  std::string exercise_id_;
};

namespace detail {
[[noreturn]] inline void fail(const char* file, int line, const std::string& message) {
  throw Error(message, std::string(file) + ":" + std::to_string(line));
}
}  // namespace detail

}  // namespace book

/// Throws book::Error with the streamed message when `condition` is false, in every build mode.
/// Usage: `BOOK_CHECK(n > 0, "n must be positive, got " << n);`
#define BOOK_CHECK(condition, message)                                    \
  do {                                                                    \
    if (!(condition)) {                                                   \
      std::ostringstream book_check_stream_;                              \
      book_check_stream_ << message;                                      \
      ::book::detail::fail(__FILE__, __LINE__, book_check_stream_.str()); \
    }                                                                     \
  } while (false)

/// The body of an exercise stub: `BOOK_NOT_IMPLEMENTED("dp.115", "exercises/…/file.cc", "README
/// §…");`
#define BOOK_NOT_IMPLEMENTED(exercise_id, file, section) \
  throw ::book::NotImplemented((exercise_id), (file), (section))
