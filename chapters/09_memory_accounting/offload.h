/// @file
/// Optimizer-state offload (ZeRO-Offload's idea: Ren et al., "ZeRO-Offload: Democratizing
/// Billion-Scale Model Training", USENIX ATC 2021) on a CPU machine: two budgeted arenas stand for
/// the GPU and the host, so the move of Adam's 12 bytes per parameter off the "device" is real and
/// counted. The device keeps the 16-bit weights and gradients (4 B/param); each step sends the
/// gradients to the host (2 B/param), updates the FP32 master weights and moments there with
/// chapter 4's adamw_step, and sends the new 16-bit weights back (2 B/param).
#pragma once

#include <cstddef>
#include <span>
#include <string>

#include "chapters/04_training_baseline/optimizer.h"
#include "common/dtype.h"
#include "common/memory.h"

namespace book::mem {

/// A memory with a budget: a tracker that refuses an allocation that would take it past
/// `budget` bytes (the out-of-memory a GPU would raise), with a book::Error naming both.
class BudgetedArena {
 public:
  /// An empty arena called `name` ("device", "host") of `budget` bytes.
  BudgetedArena(std::string name, std::size_t budget);

  /// `size` elements of T under `category`; book::Error when the arena would exceed its budget.
  template <typename T>
  TrackedBuffer<T> allocate(std::size_t size, MemoryCategory category) {
    reserve(size * sizeof(T), category);
    return TrackedBuffer<T>(size, category, &tracker_);
  }
  MemoryTracker& tracker() { return tracker_; }              ///< what it holds, counted
  const MemoryTracker& tracker() const { return tracker_; }  ///< what it holds, counted
  std::size_t budget() const { return budget_; }             ///< bytes it may hold

 private:
  void reserve(std::size_t bytes, MemoryCategory category) const;
  std::string name_;
  std::size_t budget_;
  MemoryTracker tracker_;
};

/// Bytes copied between the arenas.
struct MovedBytes {
  std::size_t to_host = 0;    ///< gradients, device → host
  std::size_t to_device = 0;  ///< updated 16-bit weights, host → device
};

/// Mixed-precision AdamW over one flat parameter vector, its optimizer state (FP32 master, m, v)
/// on the host arena when `offload`, else on the device arena next to the BF16 weights and
/// gradients.
class OffloadedAdamW {
 public:
  /// Allocates Ψ = initial.size() parameters' state; book::Error when an arena is too small.
  OffloadedAdamW(std::span<const float> initial, BudgetedArena& device, BudgetedArena& host,
                 bool offload, train::AdamWConfig config = {});

  std::span<BFloat16> weights() { return weights_.span(); }  ///< on the device, what forward reads
  std::span<BFloat16> grads() { return grads_.span(); }  ///< on the device, what backward writes
  std::span<const float> master() const { return master_.span(); }  ///< the FP32 master weights
  /// One update with learning rate `lr`: gradients to the host (counted), AdamW, weights back.
  void step(float lr);
  const MovedBytes& moved() const { return moved_; }  ///< bytes copied so far

 private:
  bool offload_;
  train::AdamWConfig config_;
  std::int64_t steps_ = 0;
  TrackedBuffer<BFloat16> weights_, grads_;  // device
  TrackedBuffer<float> master_, m_, v_;      // host when offloaded, else device
  TrackedBuffer<float> host_grads_;          // FP32 gradients where the optimizer runs
  MovedBytes moved_;
};

}  // namespace book::mem
