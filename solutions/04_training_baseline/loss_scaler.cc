// Exercise train.loss_scaler, the reference solution.
#include <algorithm>

#include "chapters/04_training_baseline/precision.h"

namespace book::train {

// Overflow means the scale is too large for FP16's 65504: back off and skip, since the
// gradients of this step are garbage. A long clean run means it may be too small (small
// gradients may be underflowing): grow and try again; an overflow will bring it back.
bool LossScaler::update(bool found_nonfinite) {
  if (found_nonfinite) {
    scale_ = std::max(scale_ * options_.backoff_factor, options_.min_scale);
    clean_steps_ = 0;
    return false;
  }
  if (++clean_steps_ >= options_.growth_interval) {
    scale_ = std::min(scale_ * options_.growth_factor, options_.max_scale);
    clean_steps_ = 0;
  }
  return true;
}

}  // namespace book::train
