#include "chapters/04_training_baseline/optimizer.h"

#include <cmath>

#include "common/check.h"

namespace book::train {

void validate(const AdamWConfig& config) {
  BOOK_CHECK(config.beta1 >= 0 && config.beta1 < 1,
             "AdamWConfig: beta1 must be in [0, 1), got "
                 << config.beta1
                 << " (1 never forgets and its bias correction 1 - beta1^t is 0; "
                    "GPT-style runs use 0.9)");
  BOOK_CHECK(config.beta2 >= 0 && config.beta2 < 1,
             "AdamWConfig: beta2 must be in [0, 1), got "
                 << config.beta2
                 << " (1 never forgets and its bias correction 1 - beta2^t is 0; "
                    "GPT-style runs use 0.95 to 0.999)");
  BOOK_CHECK(config.epsilon > 0 && std::isfinite(config.epsilon),
             "AdamWConfig: epsilon must be positive and finite, got "
                 << config.epsilon << " (it keeps m / (sqrt(v) + epsilon) finite; use 1e-8)");
  BOOK_CHECK(config.weight_decay >= 0 && std::isfinite(config.weight_decay),
             "AdamWConfig: weight_decay must be finite and >= 0, got "
                 << config.weight_decay << " (GPT-style runs use 0.1)");
}

float learning_rate(std::int64_t step, std::int64_t warmup_steps, std::int64_t total_steps,
                    float max_lr, float min_lr) {
  BOOK_CHECK(step >= 1, "learning_rate: steps count from 1, got " << step);
  BOOK_CHECK(warmup_steps >= 0 && warmup_steps <= total_steps,
             "learning_rate: need 0 <= warmup_steps <= total_steps, got " << warmup_steps << " and "
                                                                          << total_steps);
  BOOK_CHECK(0 <= min_lr && min_lr <= max_lr && max_lr <= kMaxLearningRate,
             "learning_rate: need 0 <= min_lr <= max_lr <= " << kMaxLearningRate << ", got "
                                                             << min_lr << " and " << max_lr
                                                             << " (AdamW moves each weight by "
                                                                "about lr per step; the book's "
                                                                "runs peak at 3e-3)");
  if (step <= warmup_steps)
    return max_lr * static_cast<float>(step) / static_cast<float>(warmup_steps);
  if (step >= total_steps) return min_lr;
  const double progress =
      static_cast<double>(step - warmup_steps) / static_cast<double>(total_steps - warmup_steps);
  const double cosine = 0.5 * (1.0 + std::cos(3.141592653589793 * progress));
  return static_cast<float>(min_lr + (max_lr - min_lr) * cosine);
}

}  // namespace book::train
