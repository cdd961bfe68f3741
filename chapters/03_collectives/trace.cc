#include "chapters/03_collectives/trace.h"

#include <chrono>
#include <fstream>
#include <map>

#include "common/check.h"

namespace book::coll {

namespace {
long long steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
}  // namespace

Trace::Trace() : origin_ns_(steady_ns()) {}

double Trace::now_us() const { return static_cast<double>(steady_ns() - origin_ns_) * 1e-3; }

void Trace::add(Event event) {
  std::lock_guard lock(mutex_);
  events_.push_back(std::move(event));
}

std::vector<Trace::Event> Trace::events() const {
  std::lock_guard lock(mutex_);
  return events_;
}

void Trace::write_json(const std::string& path) const {
  std::ofstream out(path);
  BOOK_CHECK(out, "cannot write the trace to " << path);
  const auto all = events();
  std::map<int, std::map<std::string, int>> lanes;  // rank -> lane -> thread id
  std::map<std::string, int> lane_ids;              // the same lane has the same id everywhere
  for (const auto& e : all) {
    const int id = lane_ids.emplace(e.lane, static_cast<int>(lane_ids.size())).first->second;
    lanes[e.rank][e.lane] = id;
  }
  out << "{\"traceEvents\": [\n";
  for (const auto& [rank, by_lane] : lanes) {  // name the processes and their lanes
    out << "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" << rank
        << ",\"args\":{\"name\":\"rank " << rank << "\"}},\n";
    for (const auto& [lane, id] : by_lane)
      out << "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" << rank << ",\"tid\":" << id
          << ",\"args\":{\"name\":\"" << lane << "\"}},\n";
  }
  for (std::size_t i = 0; i < all.size(); ++i) {
    const auto& e = all[i];
    out << "{\"name\":\"" << e.name << "\",\"cat\":\"" << e.category
        << "\",\"ph\":\"X\",\"pid\":" << e.rank << ",\"tid\":" << lane_ids[e.lane]
        << ",\"ts\":" << e.start_us << ",\"dur\":" << e.duration_us
        << ",\"args\":{\"bytes\":" << e.bytes << "}}" << (i + 1 < all.size() ? ",\n" : "\n");
  }
  out << "]}\n";
}

void Trace::write_table(const std::string& path) const {
  std::ofstream out(path);
  BOOK_CHECK(out, "cannot write the trace table to " << path);
  out << "# rank start_us end_us category bytes name lane\n";
  for (const auto& e : events())
    out << e.rank << " " << e.start_us << " " << e.start_us + e.duration_us << " " << e.category
        << " " << e.bytes << " \"" << e.name << "\" \"" << e.lane << "\"\n";
}

}  // namespace book::coll
