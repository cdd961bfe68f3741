#include "chapters/04_training_baseline/optimizer.h"

#include <cmath>

#include "common/check.h"

namespace book::train {

float learning_rate(std::int64_t step, std::int64_t warmup_steps, std::int64_t total_steps,
                    float max_lr, float min_lr) {
  BOOK_CHECK(step >= 1, "learning_rate: steps count from 1, got " << step);
  BOOK_CHECK(warmup_steps >= 0 && warmup_steps <= total_steps,
             "learning_rate: need 0 <= warmup_steps <= total_steps, got " << warmup_steps << " and "
                                                                          << total_steps);
  BOOK_CHECK(0 <= min_lr && min_lr <= max_lr,
             "learning_rate: need 0 <= min_lr <= max_lr, got " << min_lr << " and " << max_lr);
  if (step <= warmup_steps)
    return max_lr * static_cast<float>(step) / static_cast<float>(warmup_steps);
  if (step >= total_steps) return min_lr;
  const double progress =
      static_cast<double>(step - warmup_steps) / static_cast<double>(total_steps - warmup_steps);
  const double cosine = 0.5 * (1.0 + std::cos(3.141592653589793 * progress));
  return static_cast<float>(min_lr + (max_lr - min_lr) * cosine);
}

}  // namespace book::train
