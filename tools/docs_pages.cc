// bash docs/build.sh runs this (through bazel run //tools:docs_pages):
//
//   docs_pages generate docs/generated   checks every exercise catalog against the files it names,
//                                        then writes the exercise page and the interview page
//   docs_pages check-answers docs/html   fails if a line of any exercise's reference body appears
//                                        in the site outside a collapsed answer (\answer{id})
//
// Paths are relative to the repository root. Exit status 1 when a check fails, 2 for bad usage.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/check.h"
#include "common/exercise_catalog.h"
#include "common/flags.h"
#include "common/main.h"
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

std::vector<fs::path> files_under(const fs::path& dir, const std::string& extension) {
  std::vector<fs::path> out;
  if (!fs::is_directory(dir)) return out;
  for (const auto& entry : fs::recursive_directory_iterator(dir))
    if (entry.is_regular_file() && entry.path().extension() == extension)
      out.push_back(entry.path());
  std::sort(out.begin(), out.end());
  return out;
}

// README heading text -> its {#label}, for every heading of the file ("" when it has none).
std::map<std::string, std::string> headings(const std::string& readme) {
  static const std::regex heading(R"(^#{1,4} (.*?)(?: \{#([A-Za-z0-9_]+)\})?\s*$)");
  std::map<std::string, std::string> out;
  std::istringstream lines(readme);
  bool in_code = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("```", 0) == 0) in_code = !in_code;
    std::smatch m;
    if (!in_code && std::regex_match(line, m, heading)) out[m[1].str()] = m[2].str();
  }
  return out;
}

// ---- the catalog check ----------------------------------------------------------------------

// Every problem with the catalogs: missing entries, files, sections, labels, references.
std::vector<std::string> check_catalogs(const std::vector<Exercise>& all) {
  std::vector<std::string> problems;
  static const std::regex graded(R"re(EXERCISE_TEST\(\s*"([^"]+)")re");
  std::map<std::string, std::set<std::string>> ids_by_package;  // tests/NN_slug -> IDs
  for (const auto& file : files_under("tests", ".cc")) {
    const std::string text = read_file(file);
    for (std::sregex_iterator m(text.begin(), text.end(), graded), end; m != end; ++m)
      ids_by_package[file.parent_path().string()].insert((*m)[1].str());
  }
  std::set<std::string> catalogued;
  for (const Exercise& e : all) catalogued.insert(e.id);
  for (const auto& [package, ids] : ids_by_package)
    for (const auto& id : ids)
      if (!catalogued.count(id))
        problems.push_back(package + ": EXERCISE_TEST(\"" + id + "\", ...) has no entry in " +
                           package +
                           "/exercises.txt (docs/conventions.md, \"Adding an exercise\")");
  for (const Exercise& e : all) {
    const std::string where = e.where + ": [" + e.id + "] ";
    bool graded_somewhere = false;
    for (const auto& t : e.tests) {
      const std::string package = t.substr(2, t.find(':') - 2);
      graded_somewhere |= ids_by_package[package].count(e.id) > 0;
    }
    if (!graded_somewhere)
      problems.push_back(where + "no EXERCISE_TEST(\"" + e.id +
                         "\", ...) in the packages of its tests");
    std::string stubs;
    for (const auto& f : e.files) {
      if (!fs::exists(f)) problems.push_back(where + "file " + f + " does not exist");
      stubs += read_file(f);
    }
    if (stubs.find("\"" + e.id + "\"") == std::string::npos)
      problems.push_back(where + "its files do not mention \"" + e.id +
                         "\" (the stub's BOOK_NOT_IMPLEMENTED)");
    if (stubs.find("section " + e.section) == std::string::npos)
      problems.push_back(
          where + "no stub names 'section " + e.section +
          "' (the stub's message and the catalog should send the reader to one place)");
    const auto heads = headings(read_file(e.readme()));
    const auto h = heads.find(e.section);
    if (h == heads.end())
      problems.push_back(where + "section \"" + e.section + "\" is not a heading of " + e.readme());
    else if (h->second.empty())
      problems.push_back(where + "the heading \"" + e.section + "\" in " + e.readme() +
                         " needs a label for the exercise page to link to: add {#chNN_something}");
    try {
      (void)reference_text(e, ".");
    } catch (const Error& err) {
      problems.push_back(where + err.what());
    }
  }
  return problems;
}

// ---- the exercise page ----------------------------------------------------------------------

std::string exercise_page(const std::vector<Exercise>& all) {
  std::ostringstream out;
  out << "# Exercises {#exercises}\n\n"
      << "Every exercise of the book, chapter by chapter, in the order to take them. Edit the "
         "file, "
         "then check it with the command in its row: it runs that exercise's tests on your code "
         "and prints their messages. `bazel run //tools:progress` shows where you stand in every "
         "chapter (done, failing, not started) and what to do next; `--hint ID` reveals the "
         "exercise's hints one at a time, and `--solution ID` its reference once yours passes. "
         "The chapter pages keep the references folded away.\n\n"
      << "This page is generated by `bash docs/build.sh` from the catalogs "
         "`tests/NN_slug/exercises.txt` (\\ref conventions \"How a chapter is built\" says how to "
         "add one).\n\n";
  std::vector<std::string> chapters;
  std::map<std::string, std::vector<const Exercise*>> by_chapter;
  for (const auto& e : all) {
    if (!by_chapter.count(e.chapter)) chapters.push_back(e.chapter);
    by_chapter[e.chapter].push_back(&e);
  }
  out << "| chapter | exercises | easy | medium | hard |\n|---|---:|---:|---:|---:|\n";
  for (const auto& c : chapters) {
    std::map<std::string, int> n;
    for (const auto* e : by_chapter[c]) ++n[e->difficulty];
    out << "| \\ref exercises_ch" << c.substr(0, 2) << " \"" << c << "\" | " << by_chapter[c].size()
        << " | " << n["easy"] << " | " << n["medium"] << " | " << n["hard"] << " |\n";
  }
  out << "| all | " << all.size() << " | | | |\n";
  for (const auto& c : chapters) {
    const std::string readme = read_file(by_chapter[c].front()->readme());
    const auto heads = headings(readme);
    out << "\n## Chapter " << std::stoi(c.substr(0, 2)) << ": " << chapter_title(readme)
        << " {#exercises_ch" << c.substr(0, 2) << "}\n\n"
        << "| ID | problem | difficulty | file to edit | README section | check it |\n"
        << "|---|---|---|---|---|---|\n";
    for (const auto* e : by_chapter[c]) {
      const auto h = heads.find(e->section);
      const std::string label = h == heads.end() ? "" : h->second;
      std::string files;
      for (const auto& f : e->files) files += (files.empty() ? "" : "<br>") + ("`" + f + "`");
      std::string graded;
      for (const auto& t : e->tests)
        graded += (graded.empty() ? "" : ", ") + t.substr(t.find(':') + 1);
      out << "| `" << e->id << "` | " << e->problem << " | " << e->difficulty << " | " << files
          << " | " << (label.empty() ? e->section : "\\ref " + label + " \"" + e->section + "\"")
          << " | `bazel run //tools:progress -- " << e->id << "` (graded by " << graded << ") |\n";
    }
  }
  return out.str();
}

// ---- the interview page ---------------------------------------------------------------------

std::string interview_page(const std::string& intro, const std::vector<Record>& questions) {
  // Anchors of answers: {#chNN_iv_ID} in the chapters, {#page_iv_ID} on docs/ pages.
  // Only on heading lines: the same text in a paragraph or a code span is an example, not an
  // answer.
  static const std::regex anchor(R"(^#{1,4} .*\{#((ch(\d\d)|page)_iv_([a-z0-9_]+))\}\s*$)");
  std::map<std::string, std::vector<std::pair<std::string, std::string>>>
      answers;  // id -> (where, label)
  std::vector<fs::path> pages = files_under("docs", ".md");
  for (const auto& readme : files_under("chapters", ".md")) pages.push_back(readme);
  std::set<std::string> written;  // chapter numbers with a README
  for (const auto& page : pages) {
    if (page.filename() == "README.md")
      written.insert(page.parent_path().filename().string().substr(0, 2));
    std::istringstream lines(read_file(page));
    for (std::string line; std::getline(lines, line);) {
      std::smatch m;
      if (std::regex_match(line, m, anchor))
        answers[m[4].str()].emplace_back(m[3].matched ? m[3].str() : "page", m[1].str());
    }
  }
  std::ostringstream out;
  out << intro << "\n";
  int answered = 0, waiting = 0;
  std::string group;
  std::ostringstream tables;
  for (const Record& q : questions) {
    if (q.get("group") != group) {
      group = q.get("group");
      tables << "\n## " << group
             << "\n\n| question (as asked) | gloss | answered in |\n|---|---|---|\n";
    }
    std::string cells;
    std::set<std::string> linked;
    auto& found = answers[q.name];
    std::istringstream assigned(q.get("chapters"));
    std::vector<std::string> unwritten, unanswered;
    bool any = false;
    for (std::string ch; assigned >> ch;) {
      bool here = false;
      for (const auto& [where, label] : found)
        if (where == ch) {
          cells += (cells.empty() ? "" : ", ") + std::string("\\ref ") + label + " \"" +
                   (ch == "page" ? "interview answers" : "ch. " + std::to_string(std::stoi(ch))) +
                   "\"";
          linked.insert(label);
          here = any = true;
        }
      if (!here && ch != "page")
        (written.count(ch) ? unanswered : unwritten).push_back(std::to_string(std::stoi(ch)));
    }
    const auto list = [](const std::vector<std::string>& chapters) {
      std::string out = chapters.size() == 1 ? "ch. " : "chs. ";
      for (std::size_t i = 0; i < chapters.size(); ++i) out += (i ? ", " : "") + chapters[i];
      return out;
    };
    if (!unanswered.empty())
      cells += (cells.empty() ? "" : "; ") + list(unanswered) + ": not answered yet";
    if (!unwritten.empty())
      cells += (cells.empty() ? "" : "; ") + list(unwritten) + ": not written yet";
    for (const auto& [where, label] : found)
      if (!linked.count(label)) {
        cells +=
            (cells.empty() ? "" : "; ") + std::string("\\ref ") + label + " \"" +
            (where == "page" ? "interview answers" : "ch. " + std::to_string(std::stoi(where))) +
            "\" (in part)";
        any = true;
      }
    any ? ++answered : ++waiting;
    tables << "| " << q.get("question") << " | " << q.get("gloss") << " | " << cells << " |\n";
  }
  out << "\n"
      << answered << " of " << questions.size() << " questions have an answer in the book so "
      << "far; the other " << waiting << " wait for chapters still being written (each row names "
      << "them).\n"
      << tables.str();
  return out.str();
}

// ---- the answers check ----------------------------------------------------------------------

// The text of every code line of a page, outside <details class="book-answer"> blocks.
std::vector<std::string> visible_code_lines(std::string html) {
  const std::string open = "<details class=\"book-answer\"", close = "</details>";
  for (std::size_t at; (at = html.find(open)) != std::string::npos;) {
    const auto end = html.find(close, at);
    html.erase(at, end == std::string::npos ? std::string::npos : end + close.size() - at);
  }
  std::vector<std::string> lines;
  const std::string line_open = "<div class=\"line\">";
  for (std::size_t at = 0; (at = html.find(line_open, at)) != std::string::npos;) {
    at += line_open.size();
    const auto end = html.find("</div>", at);
    std::string text, raw = html.substr(at, end - at);
    bool in_tag = false;
    for (char c : raw) {
      if (c == '<')
        in_tag = true;
      else if (c == '>')
        in_tag = false;
      else if (!in_tag)
        text += c;
    }
    for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{{"&lt;", "<"},
                                                                                   {"&gt;", ">"},
                                                                                   {"&quot;", "\""},
                                                                                   {"&#39;", "'"},
                                                                                   {"&#160;", " "},
                                                                                   {"&nbsp;", " "},
                                                                                   {"&amp;", "&"}})
      for (std::size_t p = 0; (p = text.find(from, p)) != std::string::npos; p += to.size())
        text.replace(p, from.size(), to);
    lines.push_back(collapse_space(text));
    at = end;
  }
  return lines;
}

// A page gives an exercise's answer away when it shows at least kTellingLinesShown of its telling
// lines (all of them, for an answer that has fewer): one generic line, such as a loop header that
// many codes share, is not an answer.
constexpr std::size_t kTellingLinesShown = 3;

int check_answers(const std::vector<Exercise>& all, const fs::path& html_dir) {
  BOOK_CHECK(fs::is_directory(html_dir), html_dir.string()
                                             << " is not a folder: build the docs first");
  std::map<std::string, std::vector<std::string>> telling;  // exercise -> its telling lines
  std::size_t total = 0;
  for (const Exercise& e : all) {
    std::vector<std::string> statement;
    for (const auto& f : e.files) statement.push_back(read_file(f));
    for (const auto& h : files_under("chapters/" + e.chapter, ".h"))
      statement.push_back(read_file(h));
    telling[e.id] = telling_lines(reference_text(e, "."), statement);
    total += telling[e.id].size();
  }
  int shown = 0, pages = 0;
  for (const auto& page : files_under(html_dir, ".html")) {
    ++pages;
    const auto visible = visible_code_lines(read_file(page));
    const std::set<std::string> on_page(visible.begin(), visible.end());
    for (const Exercise& e : all) {
      std::vector<std::string> found;
      for (const auto& line : telling[e.id])
        if (on_page.count(line)) found.push_back(line);
      if (found.empty() || found.size() < std::min(kTellingLinesShown, telling[e.id].size()))
        continue;
      ++shown;
      std::cout << page.string() << ": the reference of " << e.id << " is shown unhidden ("
                << found.size() << " of its " << telling[e.id].size() << " telling lines), e.g. \""
                << found.front() << "\"\n";
    }
  }
  std::cout << "check-answers: " << total << " telling lines of " << all.size()
            << " exercises' references looked for in " << pages << " pages: " << shown
            << " answers shown unhidden"
            << (shown ? " (wrap each \\snippet of a reference in \\answer{ID} ... \\endanswer)"
                      : "")
            << "\n";
  return shown == 0 && pages > 0 && total > 0 ? 0 : 1;
}

int body(int argc, char** argv) {
  std::string command, folder;
  Flags flags("docs_pages", "the docs' generated pages and checks (run by docs/build.sh)");
  flags.positional("command", &command, "generate or check-answers");
  flags.positional("folder", &folder,
                   "generate: where to write the pages; check-answers: the site");
  flags.parse(argc, argv);
  BOOK_CHECK(command == "generate" || command == "check-answers",
             "the command is generate or check-answers, got '" << command << "'");
  const char* workspace = std::getenv("BUILD_WORKSPACE_DIRECTORY");
  if (workspace != nullptr) fs::current_path(workspace);
  const std::vector<Exercise> all = read_all_exercise_catalogs(".");
  if (command == "check-answers") return check_answers(all, folder);

  const auto problems = check_catalogs(all);
  for (const auto& p : problems) std::cout << "docs: " << p << "\n";
  if (!problems.empty()) {
    std::cout << "docs: " << problems.size() << " problems with the exercise catalogs\n";
    return 1;
  }
  fs::create_directories(folder);
  std::ofstream(fs::path(folder) / "exercises.md") << exercise_page(all);
  const std::string questions_file = "docs/interview_questions.txt";
  std::ofstream(fs::path(folder) / "interview.md")
      << interview_page(read_file("docs/interview_intro.md"),
                        parse_records(read_file(questions_file), questions_file));
  std::cout << "docs: " << all.size() << " exercises checked; wrote " << folder
            << "/exercises.md and " << folder << "/interview.md\n";
  return 0;
}

}  // namespace
}  // namespace book::tools

int main(int argc, char** argv) { return book::run_main(argc, argv, book::tools::body); }
