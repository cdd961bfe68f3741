// bazel run //tools:progress — how far the reader is with the exercises.
//
// Runs the graded tests against the exercise track (`bazel test --config=exercises //tests/...`),
// then reads every test.xml: Bazel reports a skipped gtest as PASSED, so only the XML tells a
// finished exercise from one not started. Prints, per chapter, which exercises are done, failing,
// not started, or waiting for a GPU.
//
//   bazel run //tools:progress                 run the exercise track, then report
//   bazel run //tools:progress -- --no-run     report on the last test run without running
//   bazel run //tools:progress -- 12           only chapter 12 (any chapter-number prefixes)
//   bazel run //tools:progress -- --teeth      CI: fail if any graded test passes against a stub
//   bazel run //tools:progress -- --count      CI: print "N passed, N failed" over all test cases
#include <algorithm>
#include <cctype>
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

namespace fs = std::filesystem;

namespace {

enum class Outcome { kPassed, kFailed, kNotStarted, kNeedsGpu, kSkipped };

struct TestCase {
  std::string target;    // e.g. tests/12_dynamic_programming/basics_test
  std::string name;      // Suite.Name
  std::string exercise;  // e.g. dp.70, or empty
  Outcome outcome;
};

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The value of attribute `name` inside one XML start tag, or "".
std::string attribute(const std::string& tag, const std::string& name) {
  const std::string key = " " + name + "=\"";
  const auto at = tag.find(key);
  if (at == std::string::npos) return "";
  const auto start = at + key.size();
  return tag.substr(start, tag.find('"', start) - start);
}

// Splits one gtest (or Bazel-written) test.xml into its test cases. The files are machine-written
// and regular, so a scan for <testcase ...> ... </testcase> is enough; no XML library needed.
std::vector<TestCase> parse_test_xml(const std::string& xml, const std::string& target) {
  std::vector<TestCase> cases;
  std::size_t pos = 0;
  while ((pos = xml.find("<testcase ", pos)) != std::string::npos) {
    const auto tag_end = xml.find('>', pos);
    const std::string tag = xml.substr(pos, tag_end - pos);
    const bool self_closing = xml[tag_end - 1] == '/';
    std::string body;
    if (!self_closing) {
      const auto close = xml.find("</testcase>", tag_end);
      body = xml.substr(tag_end, close - tag_end);
    }
    TestCase tc{target, attribute(tag, "classname") + "." + attribute(tag, "name"), "",
                Outcome::kPassed};
    const auto property = body.find("name=\"exercise\"");
    if (property != std::string::npos) {
      const auto value = body.find("value=\"", property);
      if (value != std::string::npos)
        tc.exercise = body.substr(value + 7, body.find('"', value + 7) - value - 7);
    }
    if (body.find("<failure") != std::string::npos || body.find("<error") != std::string::npos) {
      tc.outcome = Outcome::kFailed;
    } else if (attribute(tag, "result") == "skipped" || body.find("<skipped") != std::string::npos) {
      if (body.find("is not started") != std::string::npos) tc.outcome = Outcome::kNotStarted;
      else if (body.find("needs a GPU") != std::string::npos) tc.outcome = Outcome::kNeedsGpu;
      else tc.outcome = Outcome::kSkipped;
    }
    cases.push_back(tc);
    pos = tag_end;
  }
  return cases;
}

// All test cases under `testlogs`, limited to targets whose package starts with `prefix`.
std::vector<TestCase> collect(const fs::path& testlogs, const std::string& prefix) {
  std::vector<TestCase> all;
  if (!fs::exists(testlogs)) return all;
  for (const auto& entry : fs::recursive_directory_iterator(testlogs)) {
    if (entry.path().filename() != "test.xml") continue;
    const std::string target = fs::relative(entry.path().parent_path(), testlogs).string();
    if (target.rfind(prefix, 0) != 0) continue;
    for (auto& tc : parse_test_xml(read_file(entry.path()), target)) all.push_back(tc);
  }
  return all;
}

// "tests/12_dynamic_programming/basics_test" -> "12_dynamic_programming".
std::string chapter_of(const std::string& target) {
  std::stringstream parts(target);
  std::string part;
  while (std::getline(parts, part, '/'))
    if (part.size() > 3 && std::isdigit(static_cast<unsigned char>(part[0])) &&
        std::isdigit(static_cast<unsigned char>(part[1])) && part[2] == '_')
      return part;
  return target;
}

std::string capture(const std::string& command) {
  std::string out;
  if (FILE* pipe = popen(command.c_str(), "r")) {
    char buffer[4096];
    while (std::fgets(buffer, sizeof buffer, pipe)) out += buffer;
    pclose(pipe);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

const char* word(Outcome o) {
  switch (o) {
    case Outcome::kPassed: return "done";
    case Outcome::kFailed: return "failing";
    case Outcome::kNotStarted: return "not started";
    case Outcome::kNeedsGpu: return "needs a GPU";
    case Outcome::kSkipped: return "skipped";
  }
  return "?";
}

// One exercise's outcome from its test cases: any failure fails it; all passed means done.
Outcome combine(const std::vector<Outcome>& outcomes) {
  bool any_passed = false, any_not_started = false, any_gpu = false;
  for (auto o : outcomes) {
    if (o == Outcome::kFailed) return Outcome::kFailed;
    any_passed |= o == Outcome::kPassed;
    any_not_started |= o == Outcome::kNotStarted;
    any_gpu |= o == Outcome::kNeedsGpu;
  }
  if (any_not_started) return Outcome::kNotStarted;
  if (any_gpu && !any_passed) return Outcome::kNeedsGpu;
  return Outcome::kPassed;
}

// "dp.72" before "dp.115": digit runs compare as numbers.
bool natural_less(const std::string& a, const std::string& b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) && std::isdigit(static_cast<unsigned char>(b[j]))) {
      std::size_t i_end = i, j_end = j;
      while (i_end < a.size() && std::isdigit(static_cast<unsigned char>(a[i_end]))) ++i_end;
      while (j_end < b.size() && std::isdigit(static_cast<unsigned char>(b[j_end]))) ++j_end;
      const auto x = std::stoull(a.substr(i, i_end - i)), y = std::stoull(b.substr(j, j_end - j));
      if (x != y) return x < y;
      i = i_end, j = j_end;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i, ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

int report(const std::vector<TestCase>& cases, const std::vector<std::string>& chapters) {
  // chapter -> exercise -> outcomes; crashed exercise binaries show up as "<target>" entries.
  std::map<std::string, std::map<std::string, std::vector<Outcome>>> by_chapter;
  for (const auto& tc : cases) {
    const std::string chapter = chapter_of(tc.target);
    bool wanted = chapters.empty();
    for (const auto& c : chapters) wanted |= chapter.rfind(c, 0) == 0;
    if (!wanted) continue;
    const std::string key = tc.exercise.empty() ? "(" + tc.target + ")" : tc.exercise;
    if (tc.exercise.empty() && tc.outcome != Outcome::kFailed) continue;  // scaffolding test
    by_chapter[chapter][key].push_back(tc.outcome);
  }
  if (by_chapter.empty()) {
    std::cout << "No graded test results found. Run without --no-run, or check the chapter "
                 "number.\n";
    return 1;
  }
  std::cout << "\n| chapter | done | failing | not started | needs a GPU |\n"
               "|---|---:|---:|---:|---:|\n";
  std::ostringstream detail;
  for (const auto& [chapter, exercises] : by_chapter) {
    std::map<Outcome, std::vector<std::string>> groups;
    for (const auto& [id, outcomes] : exercises) groups[combine(outcomes)].push_back(id);
    std::cout << "| " << chapter << " | " << groups[Outcome::kPassed].size() << " | "
              << groups[Outcome::kFailed].size() << " | " << groups[Outcome::kNotStarted].size()
              << " | " << groups[Outcome::kNeedsGpu].size() << " |\n";
    for (Outcome o : {Outcome::kFailed, Outcome::kNotStarted, Outcome::kPassed}) {
      if (groups[o].empty()) continue;
      std::sort(groups[o].begin(), groups[o].end(), natural_less);
      detail << chapter << " " << word(o) << ":";
      for (const auto& id : groups[o]) detail << " " << id;
      detail << "\n";
    }
  }
  std::cout << "\n" << detail.str()
            << "\nA failing exercise's messages: bazel test --config=exercises "
               "//tests/<chapter>/... (the test log names the input and the first mismatch).\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  bool run = true, teeth = false, count = false;
  std::vector<std::string> chapters;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--no-run") run = false;
    else if (arg == "--teeth") teeth = true, run = false;
    else if (arg == "--count") count = true, run = false;
    else if (arg == "--help" || arg == "-h") {
      std::cout << "usage: bazel run //tools:progress [-- [--no-run|--teeth|--count] [chapter ...]]\n";
      return 0;
    } else if (!arg.empty() && arg[0] != '-') chapters.push_back(arg);
    else {
      std::cerr << "progress: unknown option " << arg << " (try --help)\n";
      return 2;
    }
  }
  const char* workspace = std::getenv("BUILD_WORKSPACE_DIRECTORY");
  if (workspace == nullptr) {
    std::cerr << "progress: run me with `bazel run //tools:progress` from the repository\n";
    return 2;
  }
  fs::current_path(workspace);
  if (run) {
    std::cout << "Running the graded tests against your exercises (bazel test --config=exercises "
                 "//tests/...)...\n"
              << std::flush;
    // Failing tests are expected while the reader works; the report below says which.
    const int status = std::system(
        "bazel test --config=exercises --keep_going --test_output=summary //tests/... >/dev/null 2>&1");
    (void)status;
  }
  const fs::path testlogs = capture("bazel info bazel-testlogs 2>/dev/null");
  if (testlogs.empty()) {
    std::cerr << "progress: `bazel info bazel-testlogs` failed; is this a Bazel workspace?\n";
    return 2;
  }
  if (count) {
    // Every test case of the last `bazel test`; a skipped case is neither passed nor failed.
    int passed = 0, failed = 0, skipped = 0;
    for (const auto& tc : collect(testlogs, "")) {
      if (tc.outcome == Outcome::kPassed) ++passed;
      else if (tc.outcome == Outcome::kFailed) ++failed;
      else ++skipped;
    }
    std::cout << passed << " passed, " << failed << " failed, " << skipped << " skipped\n";
    return failed == 0 && passed > 0 ? 0 : 1;
  }
  if (teeth) {
    // Every case of every exercise-tagged test must be skipped (not started) or failing against
    // the stubs: one that passes checks nothing the reader writes.
    std::set<std::string> exercise_targets;
    std::stringstream query(capture(
        "bazel query --keep_going 'attr(tags, \"exercise\", tests(//tests/...))' 2>/dev/null"));
    for (std::string label; std::getline(query, label);)
      if (label.rfind("//", 0) == 0) {
        label = label.substr(2);
        label[label.find(':')] = '/';
        exercise_targets.insert(label);
      }
    int bad = 0, checked = 0;
    for (const auto& tc : collect(testlogs, "tests/")) {
      if (!exercise_targets.count(tc.target)) continue;
      ++checked;
      if (tc.outcome == Outcome::kPassed || tc.outcome == Outcome::kSkipped) {
        std::cout << "teeth: " << tc.target << " " << tc.name
                  << " passes against the stubs: it tests nothing the reader writes\n";
        ++bad;
      }
    }
    std::cout << "teeth: " << checked << " graded test cases checked against the stubs, " << bad
              << " with no teeth\n";
    return bad == 0 && checked > 0 ? 0 : 1;
  }
  return report(collect(testlogs, "tests/"), chapters);
}
