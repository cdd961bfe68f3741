/// @file
/// The guard around every stage's `main`: one line on stderr and a documented exit status instead
/// of an uncaught exception's abort.
///
/// \code
/// int body(int argc, char** argv) {
///   book::Flags flags("busbw", "bus bandwidth of the collectives");
///   ...
///   flags.parse(argc, argv);
///   ...
///   return 0;
/// }
/// int main(int argc, char** argv) { return book::run_main(argc, argv, body); }
/// \endcode
///
/// Exit status:
/// | status | meaning | what is printed |
/// |---:|---|---|
/// | 0 | success, or `--help` | the help on stdout (for `--help`) |
/// | 1 | internal error: an exception that is not a book::Error | `program: internal error: what()`
/// | | 2 | bad input: a book::Error (book::UsageError included) | `program: error: message` | | 3 |
/// an exercise the run needs is not written yet (book::NotImplemented) | `program: exercise ID is
/// not started: ...` |
///
/// Whatever `body` returns is passed through. With the environment variable BOOK_DEBUG set (and
/// not empty), an error's line also says where in the source it was raised.
#pragma once

#include <functional>

namespace book {

/// Exit status of an exception that is not a book::Error: a bug, not the user's mistake.
inline constexpr int kExitInternalError = 1;
/// Exit status of a bad command line or bad input (a book::Error).
inline constexpr int kExitBadInput = 2;
/// Exit status when an exercise the run needs is not written yet (book::NotImplemented).
inline constexpr int kExitNotStarted = 3;

/// Line-buffers stdout (so redirected output arrives line by line), runs `body(argc, argv)` and
/// turns its exceptions into one line on stderr and the exit status documented above. The
/// program's name in the messages is the last component of argv[0].
int run_main(int argc, char** argv, const std::function<int(int, char**)>& body);

}  // namespace book
