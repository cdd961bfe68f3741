/// @file
/// A Chrome trace-event recorder (open the JSON in https://ui.perfetto.dev or chrome://tracing):
/// one process track per rank, one named lane (thread track) per kind of work within it ("main",
/// "comm", ...), one box per send, receive, reduce and collective.
#pragma once

#include <mutex>
#include <string>
#include <vector>

namespace book::coll {

/// Thread-safe list of complete ("ph":"X") events, written as Chrome trace-event JSON.
class Trace {
 public:
  /// One box on one rank's track.
  struct Event {
    std::string name;           ///< What happened, e.g. "sendrecv chunk 3".
    std::string category;       ///< "collective", "send", "recv", "sendrecv" or "reduce".
    int rank = 0;               ///< The track (a world rank on the threads backend).
    double start_us = 0;        ///< Start, in microseconds since the trace began.
    double duration_us = 0;     ///< Length in microseconds.
    double bytes = 0;           ///< Payload bytes moved (0 for a reduce).
    std::string lane = "main";  ///< The lane within the rank, e.g. "main" or "comm".
  };

  Trace();
  /// Microseconds since the trace was created (the clock every event uses).
  double now_us() const;
  /// Appends one event.
  void add(Event event);
  /// All events so far, in the order they were added.
  std::vector<Event> events() const;
  /// Writes {"traceEvents": [...]} to `path`: process `rank` is named "rank N", each lane is a
  /// thread of it named after the lane.
  void write_json(const std::string& path) const;
  /// Writes one line per event, `rank start_us end_us category bytes "name" "lane"`, for gnuplot.
  void write_table(const std::string& path) const;

 private:
  mutable std::mutex mutex_;
  std::vector<Event> events_;
  long long origin_ns_;
};

}  // namespace book::coll
