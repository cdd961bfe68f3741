/// @file
/// A Chrome trace-event recorder (open the JSON in https://ui.perfetto.dev or chrome://tracing):
/// one process per rank, and within it one named lane (a thread track) per kind of work, such as
/// "compute" and "comm", so overlap of communication with computation is visible at a glance.
#pragma once

#include <mutex>
#include <string>
#include <vector>

namespace book {

/// Thread-safe list of complete ("ph":"X") events, written as Chrome trace-event JSON or as a
/// table for gnuplot.
class Trace {
 public:
  /// One box on one lane of one rank.
  struct Event {
    std::string name;           ///< What happened, e.g. "sendrecv chunk 3" or "backward layer 3".
    std::string category;       ///< The kind of box, e.g. "send", "reduce", "compute".
    int rank = 0;               ///< The rank: one process track per rank.
    double start_us = 0;        ///< Start, in microseconds since the trace began.
    double duration_us = 0;     ///< Length in microseconds (≥ 0).
    double bytes = 0;           ///< Payload bytes moved (0 when nothing moved).
    std::string lane = "main";  ///< The lane within the rank, e.g. "compute" or "comm".
  };

  /// Records one box from its construction to its destruction (or to end()). Built with a null
  /// trace it records nothing and costs almost nothing, so code can always open spans.
  /// Movable (the moved-from span records nothing), not copyable.
  class Span {
   public:
    /// Starts a box named `name` of kind `category` on lane `lane` of rank `rank`.
    /// `Trace::Span span(trace, rank, "compute", "backward layer 3", "compute");`
    /// @throws book::Error for a negative rank or bytes (only with a trace).
    Span(Trace* trace, int rank, std::string lane, std::string name, std::string category,
         double bytes = 0);
    /// Records the box unless end() already did.
    ~Span();
    /// Takes over `other`'s open box.
    Span(Span&& other) noexcept;
    /// Ends this span's box, then takes over `other`'s.
    Span& operator=(Span&& other) noexcept;
    Span(const Span&) = delete;
    Span& operator=(const Span&) = delete;

    /// Sets the payload bytes the box reports (when they are known only at the end).
    /// @throws book::Error for negative or non-finite bytes.
    void set_bytes(double bytes);
    /// Records the box now; later calls and the destructor do nothing.
    void end();

   private:
    Trace* trace_;
    Event event_;
  };

  Trace();
  /// Microseconds since the trace was created (the clock every event uses).
  double now_us() const;
  /// Appends one event.
  /// @throws book::Error for a negative rank or a negative or non-finite time or size.
  void add(Event event);
  /// All events so far, in the order they were added.
  std::vector<Event> events() const;
  /// Writes {"traceEvents": [...]} to `path`: process `rank` is named "rank N", and each lane is a
  /// thread of it, named after the lane (the same lane has the same thread id on every rank).
  /// @throws book::Error if the file cannot be written.
  void write_json(const std::string& path) const;
  /// Writes one line per event, `rank start_us end_us category bytes "name" "lane"`, for gnuplot
  /// (spaces in the category become underscores, so it stays one column).
  /// @throws book::Error if the file cannot be written.
  void write_table(const std::string& path) const;

 private:
  mutable std::mutex mutex_;
  std::vector<Event> events_;
  long long origin_ns_;
};

}  // namespace book
