/// @file
/// Counted allocations: every large buffer of a training step reports its bytes, under a
/// category, to a tracker that keeps the current and peak bytes per category and in total.
///
/// Chapter 4's model and trainer allocate their parameters, gradients, master weights, Adam
/// moments, activations and scratch through TrackedBuffer; chapter 6 measures ZeRO's savings
/// with it and chapter 9 predicts its numbers byte for byte. A buffer reports size · sizeof(T),
/// the bytes its elements occupy (what a GPU tensor of that shape holds); the allocator's
/// alignment padding, under 64 bytes per buffer, is not counted.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <span>
#include <utility>
#include <vector>

#include "common/buffer.h"

namespace book {

/// What a buffer holds, in the terms of the ZeRO paper and of chapter 9's inventory.
enum class MemoryCategory {
  kParameters,       ///< the weights the forward pass reads (16-bit ones in mixed precision)
  kGradients,        ///< the gradients the backward pass writes (16-bit in mixed precision)
  kMasterWeights,    ///< FP32 weights the optimizer updates (mixed precision only)
  kOptimizerStates,  ///< Adam's m and v
  kActivations,      ///< what the forward pass keeps for the backward pass
  kCommunication,    ///< buffers that exist for communication (buckets, gathered shards)
  kOther,            ///< workspaces and scratch (e.g. a CPU's FP32 copies of 16-bit tensors)
};

/// The number of categories.
inline constexpr std::size_t kMemoryCategoryCount = 7;

/// Every category, in declaration order.
std::span<const MemoryCategory> all_memory_categories();

/// "parameters", "gradients", "master_weights", "optimizer_states", "activations",
/// "communication" or "other".
const char* memory_category_name(MemoryCategory category);

/// Bytes per category at one moment.
struct MemorySnapshot {
  std::array<std::size_t, kMemoryCategoryCount> bytes{};  ///< indexed by the category's value

  /// Bytes of `category`.
  std::size_t operator[](MemoryCategory category) const {
    return bytes[static_cast<std::size_t>(category)];
  }
  /// Bytes of all categories together.
  std::size_t total() const;
};

/// One allocation or release as an event log records it (MemoryTracker::record_events): the
/// allocation trace chapter 9's caching-allocator simulator replays.
struct MemoryEvent {
  bool allocate = true;                              ///< true: an allocation; false: a release
  MemoryCategory category = MemoryCategory::kOther;  ///< what the buffer holds
  std::size_t bytes = 0;                             ///< its bytes
  std::uintptr_t address = 0;  ///< the buffer's first byte (0 when the caller did not say)
};

/// Current and peak bytes per category and in total. Thread-safe: ranks running as threads may
/// share one tracker (then it measures the process) or hold one each (then it measures a rank).
/// It must outlive every buffer that reports to it.
class MemoryTracker {
 public:
  MemoryTracker() = default;
  MemoryTracker(const MemoryTracker&) = delete;             ///< Buffers point at it: no copies.
  MemoryTracker& operator=(const MemoryTracker&) = delete;  ///< Buffers point at it: no copies.

  /// Records an allocation of `bytes` under `category`.
  void allocate(MemoryCategory category, std::size_t bytes);
  /// Records a release; throws book::Error if `category` holds fewer than `bytes`.
  void release(MemoryCategory category, std::size_t bytes);

  /// Bytes live now in `category`.
  std::size_t current(MemoryCategory category) const;
  /// Bytes live now, all categories.
  std::size_t current_total() const;
  /// Bytes live now, per category.
  MemorySnapshot current_snapshot() const;
  /// The most bytes `category` held at any moment since construction or reset_peaks() (not
  /// necessarily at the moment of the total peak).
  std::size_t peak(MemoryCategory category) const;
  /// The most bytes held in total at any moment since construction or reset_peaks().
  std::size_t peak_total() const;
  /// The per-category breakdown at the moment the total peak was first reached; its total()
  /// equals peak_total().
  MemorySnapshot at_peak() const;
  /// Allocations recorded since construction.
  std::size_t allocation_count() const;
  /// Starts measuring peaks afresh from what is live now (e.g. after set-up, before a step).
  void reset_peaks();

  /// Records an allocation of `bytes` at `address` under `category` (TrackedBuffer's call): the
  /// same as allocate(category, bytes), plus an event when the log is on.
  void allocate(MemoryCategory category, std::size_t bytes, const void* address);
  /// Records a release of the buffer at `address`: release(category, bytes), plus an event when
  /// the log is on.
  void release(MemoryCategory category, std::size_t bytes, const void* address);
  /// Turns the event log on or off (off by default: a tracker then keeps no events). Calls made
  /// while it is on are appended, in the order the tracker sees them.
  void record_events(bool on);
  /// The events recorded so far (allocations and releases of every category, 2-argument calls
  /// with address 0).
  std::vector<MemoryEvent> events() const;

 private:
  void log(bool allocate, MemoryCategory category, std::size_t bytes, const void* address);

  mutable std::mutex mutex_;
  bool recording_ = false;
  std::vector<MemoryEvent> events_;
  MemorySnapshot current_, peak_per_category_, at_peak_;
  std::size_t current_total_ = 0, peak_total_ = 0, allocations_ = 0;
};

/// An aligned heap array, like AlignedBuffer, that reports size · sizeof(T) bytes to a tracker
/// under a category when it is allocated and again when it is released (destroyed, moved over or
/// reset). Without a tracker it is a plain aligned buffer. Movable, not copyable.
template <typename T, std::size_t Alignment = 64>
class TrackedBuffer {
 public:
  TrackedBuffer() = default;

  /// Allocates `size` elements (uninitialised) and reports them to `tracker` (may be null).
  TrackedBuffer(std::size_t size, MemoryCategory category, MemoryTracker* tracker = nullptr)
      : buffer_(size), category_(category), tracker_(tracker) {
    if (tracker_ != nullptr) tracker_->allocate(category_, bytes(), buffer_.data());
  }
  /// Allocates `size` elements set to `value` and reports them to `tracker` (may be null).
  TrackedBuffer(std::size_t size, const T& value, MemoryCategory category,
                MemoryTracker* tracker = nullptr)
      : TrackedBuffer(size, category, tracker) {
    for (std::size_t i = 0; i < size; ++i) buffer_[i] = value;
  }
  ~TrackedBuffer() { reset(); }

  /// Takes over `other`'s memory and report; `other` is left empty.
  TrackedBuffer(TrackedBuffer&& other) noexcept
      : buffer_(std::move(other.buffer_)),
        category_(other.category_),
        tracker_(std::exchange(other.tracker_, nullptr)) {
    other.buffer_ = AlignedBuffer<T, Alignment>();
  }
  /// Releases this buffer, then takes over `other`'s memory and report.
  TrackedBuffer& operator=(TrackedBuffer&& other) noexcept {
    if (this != &other) {
      reset();
      buffer_ = std::move(other.buffer_);
      other.buffer_ = AlignedBuffer<T, Alignment>();
      category_ = other.category_;
      tracker_ = std::exchange(other.tracker_, nullptr);
    }
    return *this;
  }
  TrackedBuffer(const TrackedBuffer&) = delete;             ///< One owner per report.
  TrackedBuffer& operator=(const TrackedBuffer&) = delete;  ///< One owner per report.

  /// Frees the memory and reports the release; the buffer is empty afterwards.
  void reset() {
    if (tracker_ != nullptr) tracker_->release(category_, bytes(), buffer_.data());
    tracker_ = nullptr;
    buffer_ = AlignedBuffer<T, Alignment>();
  }

  T* data() { return buffer_.data(); }                              ///< First element.
  const T* data() const { return buffer_.data(); }                  ///< First element.
  std::size_t size() const { return buffer_.size(); }               ///< Number of elements.
  std::size_t bytes() const { return buffer_.size() * sizeof(T); }  ///< Bytes reported.
  MemoryCategory category() const { return category_; }             ///< What it holds.
  T& operator[](std::size_t i) { return buffer_[i]; }               ///< Unchecked access.
  const T& operator[](std::size_t i) const { return buffer_[i]; }   ///< Unchecked access.
  std::span<T> span() { return buffer_.span(); }                    ///< All elements.
  std::span<const T> span() const { return buffer_.span(); }        ///< All elements.
  T* begin() { return buffer_.begin(); }                            ///< For range-for.
  T* end() { return buffer_.end(); }                                ///< For range-for.
  const T* begin() const { return buffer_.begin(); }                ///< For range-for.
  const T* end() const { return buffer_.end(); }                    ///< For range-for.

 private:
  AlignedBuffer<T, Alignment> buffer_;
  MemoryCategory category_ = MemoryCategory::kOther;
  MemoryTracker* tracker_ = nullptr;
};

}  // namespace book
