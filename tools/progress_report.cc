#include "tools/progress_report.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

namespace book::tools {

namespace {

// The first few lines of a message, indented for the report.
std::string excerpt(const std::string& message, int max_lines = 4) {
  std::istringstream in(message);
  std::string out;
  int n = 0;
  for (std::string line; std::getline(in, line) && n < max_lines; ++n)
    out += (n == 0 ? "" : "\n                ") + line;
  return out;
}

std::string short_target(const std::string& label) {
  const auto colon = label.find(':');
  return colon == std::string::npos ? label : label.substr(colon + 1);
}

int order(Status s) {
  switch (s) {
    case Status::kDone:
      return 0;
    case Status::kFailing:
      return 1;
    case Status::kBuildFailed:
      return 2;
    case Status::kNotStarted:
      return 3;
    case Status::kNeedsGpu:
      return 4;
    case Status::kNotRun:
      return 5;
  }
  return 6;
}

// The build error that most likely concerns `e`: one in a file it edits, else one under its
// chapter's exercises/ folder, else the first.
const BuildError* relevant_error(const Exercise& e, const std::vector<BuildError>& errors) {
  for (const auto& err : errors)
    for (const auto& f : e.files)
      if (err.file == f) return &err;
  for (const auto& err : errors)
    if (err.file.rfind("exercises/" + e.chapter + "/", 0) == 0) return &err;
  return errors.empty() ? nullptr : &errors.front();
}

}  // namespace

const char* status_word(Status status) {
  switch (status) {
    case Status::kDone:
      return "done";
    case Status::kFailing:
      return "FAILING";
    case Status::kBuildFailed:
      return "BUILD FAILS";
    case Status::kNotStarted:
      return "not started";
    case Status::kNeedsGpu:
      return "needs a GPU";
    case Status::kNotRun:
      return "not run";
  }
  return "?";
}

std::vector<ExerciseStatus> judge(const std::vector<Exercise>& exercises, const BuildEvents& events,
                                  const std::vector<TestCase>& cases,
                                  const std::vector<BuildError>& build_errors) {
  std::vector<ExerciseStatus> out;
  for (const Exercise& e : exercises) {
    ExerciseStatus st;
    st.exercise = &e;
    const std::set<std::string> targets(e.tests.begin(), e.tests.end());
    // 1. A test of it did not build: nothing it reported earlier counts.
    for (const auto& t : e.tests)
      if (events.failed_to_build.count(t)) {
        st.status = Status::kBuildFailed;
        const BuildError* err = relevant_error(e, build_errors);
        st.detail = err != nullptr
                        ? err->message
                        : short_target(t) + " did not build (Bazel's output above says why)";
      }
    if (st.status == Status::kBuildFailed) {
      out.push_back(st);
      continue;
    }
    // 2. Its cases in this run's results.
    bool any_failed = false, any_not_started = false, any_gpu = false, any_passed = false,
         wrong_track = false;
    std::string first_failure;
    for (const TestCase& c : cases) {
      if (!targets.count(c.target)) continue;
      if (c.exercise.empty()) {
        // A failed case with no exercise: the binary crashed or a plain TEST failed in it.
        if (c.outcome == CaseOutcome::kFailed && !any_failed) {
          any_failed = true;
          first_failure = short_target(c.target) + " failed as a whole: " + excerpt(c.message);
        }
        continue;
      }
      if (c.exercise != e.id) continue;
      if (c.track != "exercises") {
        wrong_track = true;
        continue;
      }
      switch (c.outcome) {
        case CaseOutcome::kFailed:
          if (!any_failed || first_failure.find(" failed as a whole") != std::string::npos)
            first_failure = short_target(c.target) + ", " + c.name + ": " + excerpt(c.message);
          any_failed = true;
          break;
        case CaseOutcome::kNotStarted:
          any_not_started = true;
          break;
        case CaseOutcome::kNeedsGpu:
          any_gpu = true;
          break;
        case CaseOutcome::kPassed:
          any_passed = true;
          break;
        case CaseOutcome::kNotSelected:
        case CaseOutcome::kSkipped:
          break;
      }
    }
    std::vector<std::string> not_run;
    for (const auto& t : e.tests)
      if (!events.test_xml.count(t)) not_run.push_back(short_target(t));
    if (any_failed) {
      st.status = Status::kFailing;
      st.detail = first_failure;
    } else if (any_not_started) {
      st.status = Status::kNotStarted;
    } else if (wrong_track) {
      st.status = Status::kNotRun;
      st.detail = "its results came from the solutions track, not yours: ignored";
    } else if (!not_run.empty()) {
      st.status = Status::kNotRun;
      st.detail = "this run has no result from ";
      for (std::size_t i = 0; i < not_run.size(); ++i) st.detail += (i ? ", " : "") + not_run[i];
    } else if (any_gpu) {
      st.status = Status::kNeedsGpu;
      st.detail = any_passed ? "its CPU tests pass; its GPU tests need a GPU (tools/gpu/README.md)"
                             : "its tests need a GPU (tools/gpu/README.md)";
    } else if (any_passed) {
      st.status = Status::kDone;
    } else {
      st.status = Status::kNotRun;
      st.detail = "no test case of its tests grades it: check the 'test =' line of " + e.where;
    }
    out.push_back(st);
  }
  return out;
}

const ExerciseStatus* next_exercise(const std::vector<ExerciseStatus>& statuses) {
  for (const auto& s : statuses)
    if (s.status == Status::kFailing || s.status == Status::kBuildFailed) return &s;
  for (const auto& s : statuses)
    if (s.status == Status::kNotStarted) return &s;
  return nullptr;
}

std::string chapter_title(const std::string& readme_text) {
  std::istringstream in(readme_text);
  std::string line;
  std::getline(in, line);
  if (line.rfind("# ", 0) != 0) return "";
  line = line.substr(2);
  const auto label = line.find(" {#");
  return label == std::string::npos ? line : line.substr(0, label);
}

std::string format_report(const std::vector<ExerciseStatus>& statuses,
                          const std::vector<std::pair<std::string, std::string>>& chapter_titles,
                          const std::vector<std::pair<std::string, int>>& hints_shown) {
  std::ostringstream out;
  std::vector<std::string> chapters;
  std::map<std::string, std::vector<const ExerciseStatus*>> by_chapter;
  std::size_t id_width = 0, problem_width = 0;
  for (const auto& s : statuses) {
    const std::string& c = s.exercise->chapter;
    if (!by_chapter.count(c)) chapters.push_back(c);
    by_chapter[c].push_back(&s);
    id_width = std::max(id_width, s.exercise->id.size());
    problem_width = std::min<std::size_t>(60, std::max(problem_width, s.exercise->problem.size()));
  }
  for (const auto& chapter : chapters) {
    auto list = by_chapter[chapter];
    std::stable_sort(list.begin(), list.end(),
                     [](const ExerciseStatus* a, const ExerciseStatus* b) {
                       return order(a->status) < order(b->status);
                     });
    std::map<Status, int> count;
    for (const auto* s : list) ++count[s->status];
    std::string title;
    for (const auto& [folder, t] : chapter_titles)
      if (folder == chapter) title = t;
    out << "\nChapter " << chapter.substr(0, 2) << (title.empty() ? "" : " — " + title) << " ("
        << chapter << "): ";
    bool first = true;
    for (Status s : {Status::kDone, Status::kFailing, Status::kBuildFailed, Status::kNotStarted,
                     Status::kNeedsGpu, Status::kNotRun}) {
      if (!count[s]) continue;
      out << (first ? "" : ", ") << count[s] << " " << status_word(s);
      first = false;
    }
    out << "\n";
    for (const auto* s : list) {
      const Exercise& e = *s->exercise;
      std::string problem = e.problem;
      if (problem.size() > problem_width) problem = problem.substr(0, problem_width - 1) + "…";
      out << "  " << status_word(s->status)
          << std::string(12 - std::string(status_word(s->status)).size(), ' ') << e.id
          << std::string(id_width - e.id.size() + 2, ' ') << problem
          << std::string(problem_width > e.problem.size() ? problem_width - problem.size() + 2 : 2,
                         ' ')
          << e.file_list() << "\n";
      if (!s->detail.empty()) out << "                " << s->detail << "\n";
    }
  }
  const ExerciseStatus* next = next_exercise(statuses);
  if (next == nullptr) {
    bool all_done = !statuses.empty();
    for (const auto& s : statuses) all_done &= s.status == Status::kDone;
    out << (all_done ? "\nEvery exercise here is done.\n"
                     : "\nNothing to start here: what is left needs a GPU or did not run.\n");
    return out.str();
  }
  const Exercise& e = *next->exercise;
  int shown = 0;
  for (const auto& [id, n] : hints_shown)
    if (id == e.id) shown = n;
  out << "\nNext: " << e.id << ", " << e.problem << " (" << e.difficulty << ")"
      << (next->status == Status::kNotStarted ? "" : ": finish it first") << "\n"
      << "  edit    " << e.file_list() << "\n"
      << "  read    " << e.readme() << ", section \"" << e.section << "\"\n"
      << "  check   bazel run //tools:progress -- " << e.id
      << "   (its tests only, with their messages)\n"
      << "  a hint  bazel run //tools:progress -- --hint " << e.id << "   (" << shown << " of "
      << e.hints.size() << " shown so far)\n";
  return out.str();
}

}  // namespace book::tools
