/// @file
/// AdamW over a range of the flat parameter buffer: the optimizer's state (m, v and the step
/// count) as an object that covers elements [begin, end), and the update of that range.
///
/// One device owns the whole range [0, total). An owner of a slice (one of several devices that
/// share the optimizer's work) has an AdamWState that covers only that slice, and adamw_update()
/// on it changes exactly the elements a whole-buffer update would, bit for bit (the update is
/// element-wise; tested for cuts inside tensors). Weight decay is chosen element by element from
/// the ParameterLayout: matrices decay, gains and biases do not, and a range may start or end
/// inside any of them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "chapters/04_training_baseline/optimizer.h"
#include "chapters/04_training_baseline/parameters.h"
#include "common/memory.h"

namespace book::train {

/// Adam's first and second moments (FP32, zero at the start) and the count of updates applied,
/// for elements [begin, end) of the flat buffer.
class AdamWState {
 public:
  /// Zero moments for elements [begin, end), reported to `tracker` (may be null) as
  /// MemoryCategory::kOptimizerStates: 8 bytes per element. Throws book::Error if begin > end.
  AdamWState(std::size_t begin, std::size_t end, MemoryTracker* tracker = nullptr);

  std::size_t begin() const { return begin_; }            ///< first element covered
  std::size_t end() const { return end_; }                ///< one past the last element covered
  std::size_t size() const { return end_ - begin_; }      ///< elements covered
  std::span<float> m() { return m_.span(); }              ///< first moments
  std::span<const float> m() const { return m_.span(); }  ///< first moments
  std::span<float> v() { return v_.span(); }              ///< second moments
  std::span<const float> v() const { return v_.span(); }  ///< second moments
  /// Updates applied so far (skipped steps do not count); the next update uses step() + 1.
  std::int64_t step() const { return step_; }
  /// Restores the count (from a checkpoint). Throws book::Error if negative.
  void set_step(std::int64_t step);

 private:
  std::size_t begin_, end_;
  TrackedBuffer<float> m_, v_;
  std::int64_t step_ = 0;
};

/// One AdamW update of elements [state.begin(), state.end()) at learning rate `lr`: counts the
/// step, then calls adamw_step (the exercise) on each run of elements with one decay flag in
/// `layout`, with config.weight_decay where the layout says decay and 0 elsewhere. `params` and
/// `grads` hold exactly those elements (element i of the span is flat element begin + i).
/// Throws book::Error if the spans' lengths differ from the state's or the range leaves the
/// layout.
void adamw_update(const ParameterLayout& layout, AdamWState& state, std::span<float> params,
                  std::span<const float> grads, float lr, const AdamWConfig& config);

}  // namespace book::train
