#include "common/memory.h"

#include <algorithm>
#include <numeric>

#include "common/check.h"

namespace book {
namespace {

constexpr std::array<MemoryCategory, kMemoryCategoryCount> kCategories = {
    MemoryCategory::kParameters,      MemoryCategory::kGradients,   MemoryCategory::kMasterWeights,
    MemoryCategory::kOptimizerStates, MemoryCategory::kActivations, MemoryCategory::kCommunication,
    MemoryCategory::kOther,
};

std::size_t index(MemoryCategory category) { return static_cast<std::size_t>(category); }

}  // namespace

std::span<const MemoryCategory> all_memory_categories() { return kCategories; }

const char* memory_category_name(MemoryCategory category) {
  switch (category) {
    case MemoryCategory::kParameters:
      return "parameters";
    case MemoryCategory::kGradients:
      return "gradients";
    case MemoryCategory::kMasterWeights:
      return "master_weights";
    case MemoryCategory::kOptimizerStates:
      return "optimizer_states";
    case MemoryCategory::kActivations:
      return "activations";
    case MemoryCategory::kCommunication:
      return "communication";
    case MemoryCategory::kOther:
      return "other";
  }
  return "?";
}

std::size_t MemorySnapshot::total() const {
  return std::accumulate(bytes.begin(), bytes.end(), std::size_t{0});
}

void MemoryTracker::allocate(MemoryCategory category, std::size_t bytes) {
  allocate(category, bytes, nullptr);
}

void MemoryTracker::release(MemoryCategory category, std::size_t bytes) {
  release(category, bytes, nullptr);
}

void MemoryTracker::log(bool allocate, MemoryCategory category, std::size_t bytes,
                        const void* address) {
  if (recording_)
    events_.push_back({allocate, category, bytes, reinterpret_cast<std::uintptr_t>(address)});
}

void MemoryTracker::record_events(bool on) {
  const std::lock_guard lock(mutex_);
  recording_ = on;
}

std::vector<MemoryEvent> MemoryTracker::events() const {
  const std::lock_guard lock(mutex_);
  return events_;
}

void MemoryTracker::allocate(MemoryCategory category, std::size_t bytes, const void* address) {
  const std::lock_guard lock(mutex_);
  log(true, category, bytes, address);
  std::size_t& now = current_.bytes[index(category)];
  now += bytes;
  current_total_ += bytes;
  ++allocations_;
  std::size_t& category_peak = peak_per_category_.bytes[index(category)];
  category_peak = std::max(category_peak, now);
  if (current_total_ > peak_total_) {
    peak_total_ = current_total_;
    at_peak_ = current_;
  }
}

void MemoryTracker::release(MemoryCategory category, std::size_t bytes, const void* address) {
  const std::lock_guard lock(mutex_);
  std::size_t& now = current_.bytes[index(category)];
  BOOK_CHECK(bytes <= now, "MemoryTracker::release: " << bytes << " bytes of "
                                                      << memory_category_name(category)
                                                      << " released but only " << now
                                                      << " are live (released twice, or under "
                                                         "another category than allocated?)");
  now -= bytes;
  current_total_ -= bytes;
  log(false, category, bytes, address);
}

std::size_t MemoryTracker::current(MemoryCategory category) const {
  const std::lock_guard lock(mutex_);
  return current_[category];
}

std::size_t MemoryTracker::current_total() const {
  const std::lock_guard lock(mutex_);
  return current_total_;
}

MemorySnapshot MemoryTracker::current_snapshot() const {
  const std::lock_guard lock(mutex_);
  return current_;
}

std::size_t MemoryTracker::peak(MemoryCategory category) const {
  const std::lock_guard lock(mutex_);
  return peak_per_category_[category];
}

std::size_t MemoryTracker::peak_total() const {
  const std::lock_guard lock(mutex_);
  return peak_total_;
}

MemorySnapshot MemoryTracker::at_peak() const {
  const std::lock_guard lock(mutex_);
  return at_peak_;
}

std::size_t MemoryTracker::allocation_count() const {
  const std::lock_guard lock(mutex_);
  return allocations_;
}

void MemoryTracker::reset_peaks() {
  const std::lock_guard lock(mutex_);
  peak_per_category_ = current_;
  at_peak_ = current_;
  peak_total_ = current_total_;
}

}  // namespace book
