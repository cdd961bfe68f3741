/// @file
/// The progress tool's judgement and its report: each exercise's status from one run's results
/// (never an older run's), per chapter, done first, with the problem, the file to edit, the first
/// failure or build error, and a suggested next exercise with the commands to work on it.
#pragma once

#include <string>
#include <vector>

#include "common/exercise_catalog.h"
#include "tools/bazel_results.h"

namespace book::tools {

/// Where an exercise stands after one run.
enum class Status {
  kDone,         ///< every test case of it passed, on the exercises track
  kFailing,      ///< a test case of it failed (or its test binary crashed)
  kBuildFailed,  ///< a test of it did not build (the error is shown)
  kNotStarted,   ///< its stub still throws "not started"
  kNeedsGpu,     ///< its CPU cases passed (if any) but a GPU case could not run here
  kNotRun,       ///< this run produced no result for it (see the detail)
};

/// The word the report uses: "done", "FAILING", "BUILD FAILS", "not started", ...
const char* status_word(Status status);

/// One exercise's status and why.
struct ExerciseStatus {
  const Exercise* exercise = nullptr;  ///< the catalog entry (not owned)
  Status status = Status::kNotRun;     ///< where it stands
  std::string detail;                  ///< first failure, build error or reason; "" when done
};

/// Judges every exercise in `exercises` from one run: its build events, the cases of the test
/// targets that run reported, and the build errors in its output. A case recorded on the
/// solutions track is never taken as the reader's: the exercise is "not run" and says why.
std::vector<ExerciseStatus> judge(const std::vector<Exercise>& exercises, const BuildEvents& events,
                                  const std::vector<TestCase>& cases,
                                  const std::vector<BuildError>& build_errors);

/// The suggested next exercise: the first failing or not building one (finish what you started),
/// else the first not started, in catalog order; nullptr when there is none.
const ExerciseStatus* next_exercise(const std::vector<ExerciseStatus>& statuses);

/// The report: per chapter (with its title, read from `chapter_titles` by folder, if given) a
/// count line and one line per exercise, done first, then failing, build failures, not started,
/// needs a GPU, not run; then the next exercise and the commands to work on it. `hints_shown`
/// maps exercise IDs to hints already revealed.
std::string format_report(const std::vector<ExerciseStatus>& statuses,
                          const std::vector<std::pair<std::string, std::string>>& chapter_titles,
                          const std::vector<std::pair<std::string, int>>& hints_shown);

/// The chapter's title from its README's first line ("# Title {#ch12}" -> "Title"); "" if none.
std::string chapter_title(const std::string& readme_text);

}  // namespace book::tools
