/// @file
/// Reading what one `bazel test` run produced, and nothing older: its build-event stream
/// (`--build_event_json_file`) says which test targets ran in this run and where their XML is,
/// and which failed to build; the XML gives each test case's outcome; the run's output gives the
/// compiler's errors. A target this run did not report has no result, whatever files an earlier
/// run (of the other track, say: both tracks share Bazel's output folders) left on disk.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

namespace book::tools {

/// One test case's outcome.
enum class CaseOutcome { kPassed, kFailed, kNotStarted, kNeedsGpu, kNotSelected, kSkipped };

/// One test case from a test.xml.
struct TestCase {
  std::string target;    ///< the Bazel label, e.g. "//tests/12_dynamic_programming:basics_test"
  std::string name;      ///< Suite.Name
  std::string exercise;  ///< the recorded exercise ID, or ""
  std::string track;     ///< the recorded track ("exercises", "solutions"), or ""
  CaseOutcome outcome = CaseOutcome::kPassed;
  std::string message;  ///< the first failure's (or the skip's) message, unescaped
};

/// Splits a gtest (or Bazel-written) test.xml into its cases, all attributed to `target`.
std::vector<TestCase> parse_test_xml(const std::string& xml, const std::string& target);

/// What one run's build-event stream says.
struct BuildEvents {
  /// Test targets that ran (or were taken from the cache) in this run: label -> test.xml path.
  std::map<std::string, std::string> test_xml;
  /// Test targets whose status Bazel reported as FAILED etc.: label -> "PASSED", "FAILED", ...
  std::map<std::string, std::string> test_status;
  /// Targets that failed to build (or whose build was skipped because a dependency failed).
  std::set<std::string> failed_to_build;
  /// Bazel's exit code (e.g. 0, 1 build failure, 3 tests failed, 4 no tests), -1 if unknown.
  int exit_code = -1;
  /// Its name, e.g. "TESTS_FAILED".
  std::string exit_name;
};

/// Parses a `--build_event_json_file` (one JSON event per line).
/// @throws book::Error for a line that is not JSON.
BuildEvents parse_build_events(const std::string& json_lines);

/// Every test case of the targets in `events`, read from the XML files it names. A target
/// whose file is missing gets one failed case saying so.
std::vector<TestCase> read_test_cases(const BuildEvents& events);

/// A compiler's (or linker's) error found in a build's output.
struct BuildError {
  std::string
      file;      ///< e.g. "exercises/12_dynamic_programming/subsequences.cc" ("" for a link error)
  int line = 0;  ///< 1-based, 0 when unknown
  std::string message;  ///< the line as the compiler printed it (colours removed)
};

/// The errors in Bazel's output, in order: `file:line:col: error: ...` lines from the compiler,
/// `undefined reference` and `multiple definition` lines from the linker, and Bazel's own
/// `ERROR:` lines when there are none of those.
std::vector<BuildError> find_build_errors(const std::string& output);

/// `text` without ANSI colour escapes.
std::string strip_ansi(const std::string& text);

}  // namespace book::tools
