// bazel run //tools:progress — how far you are with the exercises, measured now.
//
// It runs the graded tests of the exercises you ask about on the exercise track (Bazel's output,
// build errors included, goes by on stderr as it works), then judges each exercise from that
// run's results only, and prints per chapter: done, failing (with the first failure), build
// failing (with the compiler's file:line), not started, needs a GPU, with the problem and the file
// to edit, and the next exercise to do. Exit status: 0 when every exercise asked about is done,
// 1 when some are not, 2 for a bad command line or when Bazel itself could not run.
//
//   bazel run //tools:progress                    every chapter
//   bazel run //tools:progress -- 12              chapter 12 (several: 1,12)
//   bazel run //tools:progress -- dp.115          one exercise: its tests only, their messages in
//   full bazel run //tools:progress -- --hint dp.115   the next hint (they are revealed one at a
//   time) bazel run //tools:progress -- --solution dp.115   the reference, once your version passes
//   bazel run //tools:progress -- --teeth         CI: no graded test passes against the stubs
//   bazel run //tools:progress -- --count --bep=F CI: "N passed, N failed, N skipped" of a run
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/check.h"
#include "common/exercise_catalog.h"
#include "common/flags.h"
#include "common/main.h"
#include "tools/bazel_results.h"
#include "tools/progress_report.h"
#include "tools/reference_text.h"

namespace fs = std::filesystem;

namespace book::tools {
namespace {

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// What one `bazel test` run left behind.
struct Run {
  int status = -1;     // bazel's exit status
  std::string output;  // what it printed (stdout and stderr)
  BuildEvents events;  // its build-event stream
};

// Runs `bazel test <arguments>` with a fresh build-event file, echoing its output to stderr as it
// comes (so the reader sees progress and errors), and returns what it left.
Run run_bazel_test(const std::vector<std::string>& arguments) {
  char bep_template[] = "/tmp/book-progress-XXXXXX";
  const int fd = mkstemp(bep_template);
  BOOK_CHECK(fd >= 0, "cannot create a temporary file in /tmp");
  close(fd);
  const std::string bep = bep_template;
  std::string command =
      "bazel test --config=exercises --keep_going --color=no --curses=no "
      "--show_progress_rate_limit=5 --build_event_json_file=" +
      bep;
  for (const auto& a : arguments) command += " '" + a + "'";
  std::cerr << "progress: " << command << "\n" << std::flush;
  Run run;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  BOOK_CHECK(pipe != nullptr, "cannot start bazel: is it on the PATH?");
  char buffer[4096];
  while (std::fgets(buffer, sizeof buffer, pipe)) {
    run.output += buffer;
    std::cerr << buffer << std::flush;
  }
  const int wait_status = pclose(pipe);
  run.status = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 128;
  run.events = parse_build_events(read_file(bep));
  fs::remove(bep);
  // 0 all passed, 1 build failed, 3 tests failed, 4 no tests: results to judge. Anything else
  // (2 bad options, 8 interrupted, 36/37 Bazel crashed or ran out of memory): no trustworthy
  // result.
  BOOK_CHECK(run.status == 0 || run.status == 1 || run.status == 3 || run.status == 4,
             "bazel test stopped with status "
                 << run.status
                 << (run.events.exit_name.empty() ? "" : " (" + run.events.exit_name + ")")
                 << "; its output above says why. Nothing was judged.");
  return run;
}

// Hints revealed so far, kept in .book-progress/hints in the workspace (git ignores it).
class HintLog {
 public:
  explicit HintLog(fs::path path) : path_(std::move(path)) {
    std::istringstream lines(read_file(path_));
    std::string id;
    int n;
    while (lines >> id >> n) shown_[id] = n;
  }
  int shown(const std::string& id) const {
    const auto it = shown_.find(id);
    return it == shown_.end() ? 0 : it->second;
  }
  void set(const std::string& id, int n) {
    shown_[id] = n;
    fs::create_directories(path_.parent_path());
    std::ofstream out(path_);
    for (const auto& [k, v] : shown_) out << k << " " << v << "\n";
  }
  std::vector<std::pair<std::string, int>> all() const { return {shown_.begin(), shown_.end()}; }

 private:
  fs::path path_;
  std::map<std::string, int> shown_;
};

const Exercise& find_exercise(const std::vector<Exercise>& all, const std::string& id) {
  std::string near;
  for (const auto& e : all) {
    if (e.id == id) return e;
    if (near.empty() && e.id.substr(0, e.id.find('.')) == id.substr(0, id.find('.'))) near = e.id;
  }
  throw Error("'" + id + "' is not an exercise" +
              (near.empty() ? "" : " (IDs look like " + near + ")") +
              "; `bazel run //tools:progress` lists them all");
}

bool looks_like_exercise_id(const std::string& s) { return s.find('.') != std::string::npos; }

// The exercises `scope` asks about: "" all, "12" or "1,12" chapters, "dp.115" one exercise.
std::vector<Exercise> select(const std::vector<Exercise>& all, const std::string& scope) {
  if (scope.empty()) return all;
  if (looks_like_exercise_id(scope)) return {find_exercise(all, scope)};
  std::vector<Exercise> out;
  std::stringstream parts(scope);
  for (std::string part; std::getline(parts, part, ',');) {
    BOOK_CHECK(
        !part.empty() && part.find_first_not_of("0123456789") == std::string::npos,
        "'" << part << "' is neither a chapter number (12, or 1,12) nor an exercise ID (dp.115)");
    const std::string number = part.size() == 1 ? "0" + part : part;
    bool found = false;
    for (const auto& e : all)
      if (e.chapter.rfind(number + "_", 0) == 0) out.push_back(e), found = true;
    BOOK_CHECK(found, "chapter " << part << " has no exercises (chapters with exercises: see "
                                 << "tests/*/exercises.txt)");
  }
  return out;
}

std::vector<std::string> targets_of(const std::vector<Exercise>& exercises) {
  std::set<std::string> seen;
  std::vector<std::string> targets;
  for (const auto& e : exercises)
    for (const auto& t : e.tests)
      if (seen.insert(t).second) targets.push_back(t);
  return targets;
}

std::vector<std::pair<std::string, std::string>> chapter_titles(const std::vector<Exercise>& all) {
  std::vector<std::pair<std::string, std::string>> titles;
  std::set<std::string> seen;
  for (const auto& e : all)
    if (seen.insert(e.chapter).second)
      titles.emplace_back(e.chapter, chapter_title(read_file(e.readme())));
  return titles;
}

// Runs the exercises' tests and judges them. One exercise: its tests only, the others in them
// skipped, and failing logs shown in full.
std::vector<ExerciseStatus> run_and_judge(const std::vector<Exercise>& exercises, bool one) {
  std::vector<std::string> args = {one ? "--test_output=errors" : "--test_output=summary"};
  if (one) args.push_back("--test_env=BOOK_EXERCISE=" + exercises.front().id);
  for (const auto& t : targets_of(exercises)) args.push_back(t);
  const Run run = run_bazel_test(args);
  return judge(exercises, run.events, read_test_cases(run.events), find_build_errors(run.output));
}

int show_hint(const std::vector<Exercise>& all, const std::string& id, HintLog& log) {
  const Exercise& e = find_exercise(all, id);
  const int shown = std::min<int>(log.shown(id) + 1, static_cast<int>(e.hints.size()));
  log.set(id, shown);
  std::cout << e.id << ", " << e.problem << " — read " << e.readme() << ", section \"" << e.section
            << "\".\n";
  for (int i = 0; i < shown; ++i)
    std::cout << "hint " << i + 1 << " of " << e.hints.size() << ": " << e.hints[i] << "\n";
  if (shown < static_cast<int>(e.hints.size()))
    std::cout << "(run the same command again for the next hint)\n";
  else
    std::cout << "(that was the last hint; the reference is shown by --solution " << id
              << " once your version passes)\n";
  return 0;
}

int show_solution(const std::vector<Exercise>& all, const std::string& id) {
  const Exercise& e = find_exercise(all, id);
  const auto statuses = run_and_judge({e}, true);
  const ExerciseStatus& s = statuses.front();
  if (s.status != Status::kDone) {
    std::cout << "\n"
              << e.id << " is " << status_word(s.status)
              << (s.detail.empty() ? "" : " (" + s.detail + ")")
              << ". The reference stays hidden until your version passes: try --hint " << e.id
              << ".\n";
    return 1;
  }
  std::cout << "\n"
            << e.id << " passes. The reference, to compare with yours:\n\n"
            << reference_text(e, ".");
  return 0;
}

int teeth() {
  const Run run =
      run_bazel_test({"--test_tag_filters=exercise", "--test_output=summary", "//tests/..."});
  int bad = 0, checked = 0;
  for (const auto& label : run.events.failed_to_build) {
    std::cout << "teeth: " << label << " did not build on the exercise track\n";
    ++bad;
  }
  for (const TestCase& c : read_test_cases(run.events)) {
    ++checked;
    if (c.track != "exercises" && !c.exercise.empty()) {
      std::cout << "teeth: " << c.target << " " << c.name << " ran on the " << c.track
                << " track, not against the stubs\n";
      ++bad;
    } else if (c.outcome == CaseOutcome::kSkipped &&
               c.message.find("this CPU has no") != std::string::npos) {
      // Skipped for want of hardware (AVX-512 on a CPU without it), as a GPU case is without a
      // GPU: this machine cannot check its teeth, and it says so rather than calling it toothless.
      std::cout << "teeth: " << c.target << " " << c.name << " not checked here (" << c.message
                << ")\n";
    } else if (c.outcome == CaseOutcome::kPassed || c.outcome == CaseOutcome::kSkipped) {
      std::cout << "teeth: " << c.target << " " << c.name
                << " passes against the stubs: it tests nothing the reader writes\n";
      ++bad;
    }
  }
  std::cout << "teeth: " << checked << " graded test cases of " << run.events.test_xml.size()
            << " targets checked against the stubs, " << bad << " with no teeth\n";
  return bad == 0 && checked > 0 ? 0 : 1;
}

int count(const std::string& bep_file) {
  BOOK_CHECK(!bep_file.empty(),
             "--count reads a run's events: give --bep=FILE (a file written by "
             "bazel test --build_event_json_file=FILE)");
  const std::string text = read_file(bep_file);
  BOOK_CHECK(!text.empty(), "--bep=" << bep_file << " is missing or empty");
  const BuildEvents events = parse_build_events(text);
  int passed = 0, failed = static_cast<int>(events.failed_to_build.size()), skipped = 0;
  for (const TestCase& c : read_test_cases(events)) {
    if (c.outcome == CaseOutcome::kPassed)
      ++passed;
    else if (c.outcome == CaseOutcome::kFailed)
      ++failed;
    else
      ++skipped;
  }
  std::cout << passed << " passed, " << failed << " failed, " << skipped << " skipped\n";
  return failed == 0 && passed > 0 ? 0 : 1;
}

int body(int argc, char** argv) {
  std::string scope, hint, solution, bep;
  bool teeth_mode = false, count_mode = false;
  Flags flags("progress",
              "runs your exercises' tests now and says, per chapter, what is done, failing, not "
              "started or needs a GPU, and what to do next (exit status 0: all asked about are "
              "done, 1: some are not, 2: bad command line or Bazel failed)");
  flags
      .positional("scope", &scope,
                  "a chapter (12), chapters (1,12) or one exercise (dp.115); all when absent")
      .optional();
  flags.add("hint", &hint, "reveal the next hint of this exercise (one more each time)");
  flags.add("solution", &solution, "show this exercise's reference, once your version passes");
  flags.add("teeth", &teeth_mode, "CI: fail if any graded test passes against the stubs");
  flags.add("count", &count_mode, "CI: count the test cases of the run in --bep");
  flags.add("bep", &bep, "a build-event file (--build_event_json_file) for --count");
  flags.parse(argc, argv);

  const char* workspace = std::getenv("BUILD_WORKSPACE_DIRECTORY");
  BOOK_CHECK(workspace != nullptr, "run me with `bazel run //tools:progress` inside the book");
  fs::current_path(workspace);
  if (count_mode) return count(bep);
  if (teeth_mode) return teeth();
  const std::vector<Exercise> all = read_all_exercise_catalogs(".");
  HintLog hints(fs::path(".book-progress") / "hints");
  if (!hint.empty()) return show_hint(all, hint, hints);
  if (!solution.empty()) return show_solution(all, solution);

  const std::vector<Exercise> chosen = select(all, scope);
  std::cerr << "progress: running the graded tests of " << chosen.size()
            << (chosen.size() == 1 ? " exercise" : " exercises")
            << " against your code. The first run builds what they need (minutes on a laptop); "
               "later runs take seconds.\n";
  const auto statuses = run_and_judge(chosen, looks_like_exercise_id(scope));
  std::cerr << "progress: (Bazel reports a test FAILED while an exercise it grades is not started: "
               "a stub is never a pass. The report below tells the two apart.)\n";
  std::cout << format_report(statuses, chapter_titles(chosen), hints.all()) << std::flush;
  for (const auto& s : statuses)
    if (s.status != Status::kDone) return 1;
  return 0;
}

}  // namespace
}  // namespace book::tools

int main(int argc, char** argv) { return book::run_main(argc, argv, book::tools::body); }
