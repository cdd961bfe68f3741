#include "common/trace.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <utility>

#include "common/check.h"

namespace book {

namespace {

long long steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// A JSON string literal: quotes, backslashes and control characters escaped; other bytes (UTF-8
// such as "→") pass through, which JSON allows.
std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
          out += escaped;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

// Microseconds with nanosecond resolution, never in exponent form (so long traces keep their
// resolution).
std::string microseconds(double us) {
  char text[64];
  std::snprintf(text, sizeof text, "%.3f", us);
  return text;
}

// A number in JSON form: integers without a fraction, never NaN (add() refuses it).
std::string number(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%.17g", value);
  return text;
}

// A table cell that gnuplot reads as one column: quoted, inner quotes replaced.
std::string table_quoted(std::string text) {
  std::replace(text.begin(), text.end(), '"', '\'');
  return "\"" + text + "\"";
}

// A bare table word (trace.gp compares it with strcol): spaces become underscores.
std::string table_word(std::string text) {
  std::replace(text.begin(), text.end(), ' ', '_');
  return text.empty() ? "-" : text;
}

}  // namespace

Trace::Span::Span(Trace* trace, int rank, std::string lane, std::string name, std::string category,
                  double bytes)
    : trace_(trace) {
  if (trace_ == nullptr) return;  // nothing recorded: keep the strings out of the fast path
  BOOK_CHECK(rank >= 0, "trace span '" << name << "': rank " << rank << " is negative");
  BOOK_CHECK(std::isfinite(bytes) && bytes >= 0,
             "trace span '" << name << "': bytes must be finite and ≥ 0, got " << bytes);
  event_.name = std::move(name);
  event_.category = std::move(category);
  event_.lane = std::move(lane);
  event_.rank = rank;
  event_.bytes = bytes;
  event_.start_us = trace_->now_us();
}

Trace::Span::~Span() {
  // The constructor and set_bytes() refused bad values already, so only an allocation can fail
  // here, and a destructor must not throw.
  try {
    end();
  } catch (...) {
  }
}

Trace::Span::Span(Span&& other) noexcept
    : trace_(std::exchange(other.trace_, nullptr)), event_(std::move(other.event_)) {}

Trace::Span& Trace::Span::operator=(Span&& other) noexcept {
  if (this != &other) {
    try {
      end();
    } catch (...) {
    }
    trace_ = std::exchange(other.trace_, nullptr);
    event_ = std::move(other.event_);
  }
  return *this;
}

void Trace::Span::set_bytes(double bytes) {
  BOOK_CHECK(std::isfinite(bytes) && bytes >= 0,
             "trace span '" << event_.name << "': bytes must be finite and ≥ 0, got " << bytes);
  event_.bytes = bytes;
}

void Trace::Span::end() {
  if (trace_ == nullptr) return;
  Trace* trace = std::exchange(trace_, nullptr);
  event_.duration_us = std::max(0.0, trace->now_us() - event_.start_us);
  trace->add(std::move(event_));
}

Trace::Trace() : origin_ns_(steady_ns()) {}

double Trace::now_us() const { return static_cast<double>(steady_ns() - origin_ns_) * 1e-3; }

void Trace::add(Event event) {
  BOOK_CHECK(event.rank >= 0,
             "trace event '" << event.name << "': rank " << event.rank << " is negative");
  BOOK_CHECK(std::isfinite(event.start_us) && std::isfinite(event.duration_us) &&
                 event.duration_us >= 0 && std::isfinite(event.bytes) && event.bytes >= 0,
             "trace event '" << event.name << "': start " << event.start_us << " us, duration "
                             << event.duration_us << " us, bytes " << event.bytes
                             << ": times and sizes must be finite, durations and sizes ≥ 0");
  std::lock_guard lock(mutex_);
  events_.push_back(std::move(event));
}

std::vector<Trace::Event> Trace::events() const {
  std::lock_guard lock(mutex_);
  return events_;
}

void Trace::write_json(const std::string& path) const {
  std::ofstream out(path);
  BOOK_CHECK(out, "cannot write the trace to " << path << ": check that the folder exists");
  const auto all = events();
  // Lanes in order of first appearance: the same thread id for a lane on every rank, so lanes
  // line up across processes in the viewer.
  std::vector<std::string> lanes;
  std::map<int, std::vector<bool>> lanes_of_rank;
  const auto lane_id = [&](const std::string& lane) {
    const auto it = std::find(lanes.begin(), lanes.end(), lane);
    if (it != lanes.end()) return static_cast<std::size_t>(it - lanes.begin());
    lanes.push_back(lane);
    return lanes.size() - 1;
  };
  for (const auto& e : all) {
    auto& used = lanes_of_rank[e.rank];
    const std::size_t id = lane_id(e.lane);
    if (used.size() <= id) used.resize(id + 1, false);
    used[id] = true;
  }
  out << "{\"traceEvents\": [";
  const char* separator = "\n";
  for (const auto& [rank, used] : lanes_of_rank) {
    out << separator << "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" << rank
        << ",\"args\":{\"name\":\"rank " << rank << "\"}},\n"
        << "{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":" << rank
        << ",\"args\":{\"sort_index\":" << rank << "}}";
    separator = ",\n";
    for (std::size_t id = 0; id < used.size(); ++id) {
      if (!used[id]) continue;
      out << separator << "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" << rank
          << ",\"tid\":" << id << ",\"args\":{\"name\":" << json_string(lanes[id]) << "}},\n"
          << "{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":" << rank << ",\"tid\":" << id
          << ",\"args\":{\"sort_index\":" << id << "}}";
    }
  }
  for (const auto& e : all) {
    out << separator << "{\"name\":" << json_string(e.name)
        << ",\"cat\":" << json_string(e.category) << ",\"ph\":\"X\",\"pid\":" << e.rank
        << ",\"tid\":" << lane_id(e.lane) << ",\"ts\":" << microseconds(e.start_us)
        << ",\"dur\":" << microseconds(e.duration_us) << ",\"args\":{\"bytes\":" << number(e.bytes)
        << "}}";
    separator = ",\n";
  }
  out << "\n]}\n";
  BOOK_CHECK(out.flush(), "writing the trace to " << path << " failed (disk full?)");
}

void Trace::write_table(const std::string& path) const {
  std::ofstream out(path);
  BOOK_CHECK(out, "cannot write the trace table to " << path << ": check that the folder exists");
  out << "# rank start_us end_us category bytes name lane\n";
  for (const auto& e : events())
    out << e.rank << " " << microseconds(e.start_us) << " "
        << microseconds(e.start_us + e.duration_us) << " " << table_word(e.category) << " "
        << number(e.bytes) << " " << table_quoted(e.name) << " " << table_quoted(e.lane) << "\n";
  BOOK_CHECK(out.flush(), "writing the trace table to " << path << " failed (disk full?)");
}

}  // namespace book
