#include "tools/reference_text.h"

#include <fstream>
#include <set>
#include <sstream>

#include "common/check.h"

namespace book::tools {

namespace {

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string join(const std::vector<std::string>& lines, std::size_t from, std::size_t to) {
  std::string out;
  for (std::size_t i = from; i < to && i < lines.size(); ++i) out += lines[i] + "\n";
  return out;
}

std::size_t indent_of(const std::string& line) { return line.find_first_not_of(" \t"); }

bool is_comment(const std::string& line) {
  const auto at = indent_of(line);
  return at != std::string::npos && line.compare(at, 2, "//") == 0;
}

bool is_identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Whether `line` mentions `symbol(` as a whole name (not `my_symbol(`).
bool names_call(const std::string& line, const std::string& symbol) {
  for (std::size_t at = line.find(symbol + "("); at != std::string::npos;
       at = line.find(symbol + "(", at + 1))
    if (at == 0 || !is_identifier_char(line[at - 1])) {
      // `Class::symbol(` is a definition too; `x.symbol(` or `symbol(` after `=` is a call.
      if (at > 0 && (line[at - 1] == '.' || line[at - 1] == '>')) continue;
      return true;
    }
  return false;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  BOOK_CHECK(in, "cannot read " << path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::string collapse_space(const std::string& line) {
  std::string out;
  bool space = false;
  for (char c : line) {
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
      space = !out.empty();
    } else {
      if (space) out += ' ';
      out += c;
      space = false;
    }
  }
  return out;
}

std::string extract_reference(const std::string& source, const std::string& symbol,
                              const std::string& path) {
  if (symbol.empty()) return source;
  const std::vector<std::string> lines = split_lines(source);
  const std::string marker = "//! [" + symbol + "]";
  std::vector<std::size_t> markers;
  for (std::size_t i = 0; i < lines.size(); ++i)
    if (lines[i].find(marker) != std::string::npos) markers.push_back(i);
  if (markers.size() >= 2) return join(lines, markers[0] + 1, markers[1]);
  // A definition: a line at top-level indentation that names `symbol(` and does not end in ';'
  // before its body opens.
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (!names_call(lines[i], symbol) || is_comment(lines[i])) continue;
    const std::size_t indent = indent_of(lines[i]);
    std::size_t open = i;
    while (open < lines.size() && lines[open].find('{') == std::string::npos &&
           lines[open].find(';') == std::string::npos)
      ++open;
    if (open >= lines.size() || lines[open].find('{') == std::string::npos)
      continue;  // a declaration
    std::size_t close = open;
    if (lines[open].find('}') == std::string::npos ||
        lines[open].rfind('}') < lines[open].find('{')) {
      for (close = open + 1; close < lines.size(); ++close)
        if (indent_of(lines[close]) == indent && lines[close].compare(indent, 1, "}") == 0) break;
      BOOK_CHECK(close < lines.size(), path << ": the body of " << symbol << " does not close");
    }
    std::size_t first = i;
    while (first > 0 && is_comment(lines[first - 1])) --first;
    return join(lines, first, close + 1);
  }
  BOOK_CHECK(false, path << ": no snippet '//! [" << symbol << "]' and no definition of " << symbol
                         << "(...) — fix the 'solution =' line of its catalog entry");
  return "";
}

std::string reference_text(const Exercise& exercise, const std::string& root) {
  std::string out;
  for (const auto& ref : exercise.solutions) {
    out += "// ---- " + ref.file + (ref.symbol.empty() ? "" : " (" + ref.symbol + ")") + "\n";
    out += extract_reference(read_file(root + "/" + ref.file), ref.symbol, ref.file);
  }
  return out;
}

std::vector<std::string> telling_lines(const std::string& text,
                                       const std::vector<std::string>& statement_texts,
                                       std::size_t min_length) {
  std::set<std::string> statement;
  for (const auto& s : statement_texts)
    for (const auto& line : split_lines(s)) statement.insert(collapse_space(line));
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const auto& raw : split_lines(text)) {
    const std::string line = collapse_space(raw);
    if (line.size() < min_length || statement.count(line) || !seen.insert(line).second) continue;
    if (line.rfind("#include", 0) == 0 || line.rfind("namespace", 0) == 0 ||
        line.rfind("}  // namespace", 0) == 0 || line.rfind("} // namespace", 0) == 0 ||
        line.rfind("// ----", 0) == 0 || line.rfind("//! [", 0) == 0)
      continue;
    out.push_back(line);
  }
  return out;
}

}  // namespace book::tools
