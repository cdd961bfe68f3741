#include "common/table.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/check.h"

namespace book {

std::string fixed(double value, int digits) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", digits, value);
  return text;
}

Table::Table(std::vector<std::string> columns) : columns_(std::move(columns)) {
  BOOK_CHECK(!columns_.empty(), "a table needs at least one column");
}

void Table::add_row(std::vector<std::string> cells) {
  BOOK_CHECK(cells.size() == columns_.size(), "row has " << cells.size()
                                                         << " cells but the table has "
                                                         << columns_.size() << " columns");
  rows_.push_back(std::move(cells));
}

std::string Table::markdown() const {
  std::vector<std::size_t> width(columns_.size());
  for (std::size_t c = 0; c < columns_.size(); ++c) width[c] = columns_[c].size();
  for (const auto& row : rows_)
    for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  std::ostringstream out;
  auto line = [&](const std::vector<std::string>& cells) {
    out << "|";
    for (std::size_t c = 0; c < cells.size(); ++c)
      out << " " << std::string(width[c] - cells[c].size(), ' ') << cells[c] << " |";
    out << "\n";
  };
  line(columns_);
  out << "|";
  for (std::size_t c = 0; c < columns_.size(); ++c) out << std::string(width[c] + 1, '-') << ":|";
  out << "\n";
  for (const auto& row : rows_) line(row);
  return out.str();
}

namespace {
std::ofstream open_for_writing(const std::string& path) {
  std::ofstream file(path);
  BOOK_CHECK(file.good(),
             "cannot write " << path << ": check that its folder exists and is writable");
  return file;
}

bool is_number(const std::string& text) {
  if (text.empty()) return false;
  double value;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size();
}

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (char ch : text) {
    if (ch == '"' || ch == '\\') out += '\\';
    if (ch == '\n') {
      out += "\\n";
      continue;
    }
    out += ch;
  }
  return out + "\"";
}
}  // namespace

void Table::write_csv(const std::string& path) const {
  auto file = open_for_writing(path);
  auto line = [&](const std::vector<std::string>& cells) {
    for (std::size_t c = 0; c < cells.size(); ++c) file << (c ? "," : "") << cells[c];
    file << "\n";
  };
  line(columns_);
  for (const auto& row : rows_) line(row);
}

void Table::write_json(const std::string& path) const {
  auto file = open_for_writing(path);
  file << "[\n";
  for (std::size_t r = 0; r < rows_.size(); ++r) {
    file << "  {";
    for (std::size_t c = 0; c < columns_.size(); ++c) {
      const auto& cell = rows_[r][c];
      file << (c ? ", " : "") << json_string(columns_[c]) << ": "
           << (is_number(cell) ? cell : json_string(cell));
    }
    file << "}" << (r + 1 < rows_.size() ? "," : "") << "\n";
  }
  file << "]\n";
}

std::string results_dir() {
  std::filesystem::path dir;
  if (const char* env = std::getenv("BOOK_RESULTS_DIR"); env && *env) {
    dir = env;
  } else if (const char* ws = std::getenv("BUILD_WORKING_DIRECTORY"); ws && *ws) {
    dir = std::filesystem::path(ws) / "results";
  } else {
    dir = "results";
  }
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  BOOK_CHECK(!error, "cannot create the results folder " << dir << ": " << error.message()
                                                         << " (set BOOK_RESULTS_DIR to another)");
  BOOK_CHECK(std::filesystem::is_directory(dir, error),
             "the results folder " << dir << " is not a folder (set BOOK_RESULTS_DIR to another)");
  // A file created and removed at once: a stage that calls this before its run learns now, not
  // after minutes of work, that it could not keep the results.
  const std::filesystem::path probe = dir / (".write_probe_" + std::to_string(::getpid()));
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
  BOOK_CHECK(fd >= 0, "cannot write into the results folder " << dir << ": " << std::strerror(errno)
                                                              << " (set BOOK_RESULTS_DIR to a "
                                                                 "folder you can write)");
  ::close(fd);
  ::unlink(probe.c_str());
  return dir.string();
}

std::string run_gnuplot(const std::string& script, const std::string& picture,
                        const std::string& data) {
  if (std::system("command -v gnuplot > /dev/null 2>&1") != 0)
    return "gnuplot not found (apt-get install gnuplot-nox): plot skipped; data in " + data;
  if (std::system(("gnuplot " + script).c_str()) != 0) return "gnuplot failed on " + script;
  return "plot: " + picture;
}

}  // namespace book
