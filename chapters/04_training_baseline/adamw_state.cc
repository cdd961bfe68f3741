#include "chapters/04_training_baseline/adamw_state.h"

#include <algorithm>

#include "chapters/04_training_baseline/profile.h"
#include "chapters/04_training_baseline/threads.h"
#include "common/check.h"

namespace book::train {

AdamWState::AdamWState(std::size_t begin, std::size_t end, MemoryTracker* tracker)
    : begin_(begin), end_(end) {
  BOOK_CHECK(begin <= end,
             "AdamWState: range [" << begin << ", " << end << ") ends before it begins");
  m_ = TrackedBuffer<float>(size(), 0.0f, MemoryCategory::kOptimizerStates, tracker);
  v_ = TrackedBuffer<float>(size(), 0.0f, MemoryCategory::kOptimizerStates, tracker);
}

void AdamWState::set_step(std::int64_t step) {
  BOOK_CHECK(step >= 0, "AdamWState::set_step: the step count cannot be negative, got " << step);
  step_ = step;
}

//! [adamw_update]
void adamw_update(const ParameterLayout& layout, AdamWState& state, std::span<float> params,
                  std::span<const float> grads, float lr, const AdamWConfig& config) {
  BOOK_CHECK(params.size() == state.size() && grads.size() == state.size(),
             "adamw_update: the state covers " << state.size() << " elements [" << state.begin()
                                               << ", " << state.end() << "), got " << params.size()
                                               << " parameters and " << grads.size()
                                               << " gradients");
  validate(config);
  BOOK_CHECK(lr >= 0 && lr <= kMaxLearningRate, "adamw_update: the learning rate must be in [0, "
                                                    << kMaxLearningRate << "], got " << lr);
  const std::vector<SlotPiece> pieces = layout.pieces(state.begin(), state.end());  // checks
  const LayerScope scope("AdamW");
  state.set_step(state.step() + 1);
  AdamWConfig no_decay = config;
  no_decay.weight_decay = 0;  // gains and biases are not decayed
  // Element by element: the threads take contiguous ranges of the state, each piece cut to them.
  parallel_for(state.size(), grain_for(16), [&](std::size_t first, std::size_t last) {
    for (const SlotPiece& piece : pieces) {
      const std::size_t begin = std::max(piece.begin - state.begin(), first);
      const std::size_t end = std::min(piece.end - state.begin(), last);
      if (begin >= end) continue;
      const std::size_t n = end - begin;
      adamw_step(params.subspan(begin, n), grads.subspan(begin, n), state.m().subspan(begin, n),
                 state.v().subspan(begin, n), state.step(), lr,
                 piece.slot->decay ? config : no_decay);
    }
  });
}
//! [adamw_update]

}  // namespace book::train
