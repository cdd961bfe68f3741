#include "common/exercise_catalog.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "common/check.h"

namespace book {

namespace {

std::string trim(std::string_view s) {
  const auto begin = s.find_first_not_of(" \t\r");
  if (begin == std::string_view::npos) return "";
  const auto end = s.find_last_not_of(" \t\r");
  return std::string(s.substr(begin, end - begin + 1));
}

std::string where(const std::string& path, int line) { return path + ":" + std::to_string(line); }

// "tests/12_dynamic_programming/exercises.txt" (after any leading folders) ->
// "12_dynamic_programming".
std::string chapter_of_catalog(const std::string& path) {
  const std::filesystem::path p(path);
  BOOK_CHECK(
      p.filename() == "exercises.txt" && p.parent_path().parent_path().filename() == "tests",
      "an exercise catalog must be tests/NN_slug/exercises.txt, got '" << path << "'");
  return p.parent_path().filename().string();
}

const std::set<std::string> kKeys = {"problem", "difficulty", "file", "section",
                                     "test",    "solution",   "hint"};

}  // namespace

std::vector<std::string> Record::all(const std::string& key) const {
  std::vector<std::string> values;
  for (const auto& [k, v] : fields)
    if (k == key) values.push_back(v);
  return values;
}

std::string Record::get(const std::string& key) const {
  for (const auto& [k, v] : fields)
    if (k == key) return v;
  return "";
}

std::vector<Record> parse_records(std::string_view text, const std::string& path) {
  std::vector<Record> records;
  std::istringstream lines{std::string(text)};
  std::string line;
  int number = 0;
  while (std::getline(lines, line)) {
    ++number;
    const std::string content = trim(line);
    if (content.empty() || content[0] == '#') continue;
    if (line[0] == ' ' || line[0] == '\t') {  // continues the previous value
      BOOK_CHECK(!records.empty() && !records.back().fields.empty(),
                 where(path, number) << ": an indented line continues a value, but no value "
                                        "comes before it");
      records.back().fields.back().second += " " + content;
      continue;
    }
    if (content.front() == '[') {
      BOOK_CHECK(content.back() == ']' && content.size() > 2,
                 where(path, number) << ": a record starts with [name], got '" << content << "'");
      records.push_back({trim(content.substr(1, content.size() - 2)), {}, where(path, number)});
      continue;
    }
    const auto equals = content.find('=');
    BOOK_CHECK(equals != std::string::npos && equals > 0,
               where(path, number)
                   << ": expected 'key = value', '[name]' or '# comment', got '" << content << "'");
    BOOK_CHECK(!records.empty(), where(path, number)
                                     << ": 'key = value' before the first [name] line");
    records.back().fields.emplace_back(trim(content.substr(0, equals)),
                                       trim(content.substr(equals + 1)));
  }
  return records;
}

std::vector<Exercise> parse_exercise_catalog(std::string_view text, const std::string& path) {
  const std::string chapter = chapter_of_catalog(path);
  std::vector<Exercise> exercises;
  std::set<std::string> seen;
  for (const Record& r : parse_records(text, path)) {
    for (const auto& [key, value] : r.fields) {
      BOOK_CHECK(kKeys.count(key), r.where << ": [" << r.name << "] has an unknown key '" << key
                                           << "' (valid: problem, difficulty, file, section, "
                                              "test, solution, hint)");
      BOOK_CHECK(!value.empty(), r.where << ": [" << r.name << "] has an empty '" << key << "'");
    }
    for (const char* key : {"problem", "difficulty", "file", "section", "test"}) {
      BOOK_CHECK(r.all(key).size() == 1, r.where << ": [" << r.name << "] needs exactly one '"
                                                 << key << " = ...' line, got "
                                                 << r.all(key).size());
    }
    BOOK_CHECK(seen.insert(r.name).second, r.where << ": exercise " << r.name << " appears twice");
    Exercise e;
    e.id = r.name;
    e.chapter = chapter;
    e.problem = r.get("problem");
    e.difficulty = r.get("difficulty");
    std::istringstream files(r.get("file"));
    for (std::string file; files >> file;) e.files.push_back(file);
    e.section = r.get("section");
    e.where = r.where;
    e.hints = r.all("hint");
    BOOK_CHECK(e.difficulty == "easy" || e.difficulty == "medium" || e.difficulty == "hard",
               r.where << ": [" << e.id << "] difficulty must be easy, medium or hard, got '"
                       << e.difficulty << "'");
    BOOK_CHECK(!e.hints.empty() && e.hints.size() <= 3,
               r.where << ": [" << e.id << "] needs one to three 'hint = ...' lines, got "
                       << e.hints.size());
    std::istringstream tests(r.get("test"));
    for (std::string label; tests >> label;) {
      BOOK_CHECK(label.rfind("//tests/", 0) == 0 && label.find(':') != std::string::npos,
                 r.where << ": [" << e.id << "] test must be labels like //tests/NN_slug:name_test,"
                         << " got '" << label << "'");
      e.tests.push_back(label);
    }
    BOOK_CHECK(!r.all("solution").empty(),
               r.where << ": [" << e.id << "] needs at least one 'solution = file [symbol]' line");
    for (const std::string& line : r.all("solution")) {
      std::istringstream solution(line);
      Exercise::Reference ref;
      std::string extra;
      solution >> ref.file >> ref.symbol;
      BOOK_CHECK(!(solution >> extra),
                 r.where << ": [" << e.id << "] solution is 'file [symbol]', got '" << line << "'");
      e.solutions.push_back(ref);
    }
    exercises.push_back(std::move(e));
  }
  return exercises;
}

std::string Exercise::file_list() const {
  std::string out;
  for (const auto& f : files) out += (out.empty() ? "" : ", ") + f;
  return out;
}

std::vector<Exercise> read_exercise_catalog(const std::string& path) {
  std::ifstream in(path);
  BOOK_CHECK(in, "cannot read the exercise catalog " << path);
  std::stringstream text;
  text << in.rdbuf();
  return parse_exercise_catalog(text.str(), path);
}

std::vector<Exercise> read_all_exercise_catalogs(const std::string& root) {
  namespace fs = std::filesystem;
  std::vector<std::string> paths;
  const fs::path chapters = root == "." ? fs::path("tests") : fs::path(root) / "tests";
  if (fs::is_directory(chapters))
    for (const auto& entry : fs::directory_iterator(chapters))
      if (fs::exists(entry.path() / "exercises.txt"))
        paths.push_back((entry.path() / "exercises.txt").string());
  std::sort(paths.begin(), paths.end());
  std::vector<Exercise> all;
  std::map<std::string, std::string> where;
  for (const auto& path : paths) {
    for (auto& e : read_exercise_catalog(path)) {
      const auto [it, fresh] = where.emplace(e.id, e.where);
      BOOK_CHECK(fresh, e.where << ": exercise " << e.id << " is also in " << it->second);
      all.push_back(std::move(e));
    }
  }
  return all;
}

}  // namespace book
