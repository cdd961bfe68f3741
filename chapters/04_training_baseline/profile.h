/// @file
/// Where a training step's time goes: wall time per kind of layer ("attention backward", "GELU
/// forward", ...), summed over the calls the calling thread makes while a LayerProfile is active.
/// The bench prints it as a table (the README's "Where the time goes"). With no profile active, a
/// timed scope costs one thread-local read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace book::train {

/// Records the layer times of the thread that constructs it, until it is destroyed. One per
/// thread at a time; the work a layer hands to other threads counts in the caller's scope.
class LayerProfile {
 public:
  /// One kind of layer's total.
  struct Entry {
    std::string name;        ///< what ran, e.g. "attention backward"
    double seconds = 0;      ///< wall time summed over its calls
    std::int64_t calls = 0;  ///< how many scopes of that name were timed
  };

  /// Starts recording this thread's layers. Throws book::Error if this thread already has one.
  LayerProfile();
  ~LayerProfile();
  LayerProfile(const LayerProfile&) = delete;             ///< Registered with its thread.
  LayerProfile& operator=(const LayerProfile&) = delete;  ///< Registered with its thread.

  /// The totals, in the order each name was first timed.
  const std::vector<Entry>& entries() const { return entries_; }
  /// Forgets the totals (the warm-up steps before a measurement).
  void reset() { entries_.clear(); }

  /// Adds `seconds` to `name`'s total (what LayerScope calls).
  void add(const char* name, double seconds);

 private:
  std::vector<Entry> entries_;
};

/// Times the enclosing scope as `name` (a string literal) into the calling thread's
/// LayerProfile, if it has one; otherwise does nothing.
class LayerScope {
 public:
  /// Starts the clock when this thread has a profile.
  explicit LayerScope(const char* name);
  /// Adds the time since construction to the profile.
  ~LayerScope();
  LayerScope(const LayerScope&) = delete;             ///< A scope is a span of one thread's time.
  LayerScope& operator=(const LayerScope&) = delete;  ///< A scope is a span of one thread's time.

 private:
  LayerProfile* profile_;
  const char* name_;
  std::int64_t start_ns_ = 0;
};

}  // namespace book::train
