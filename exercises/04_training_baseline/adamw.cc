#include "chapters/04_training_baseline/optimizer.h"
#include "common/check.h"

namespace book::train {

void adamw_step(std::span<float> params, std::span<const float> grads, std::span<float> m,
                std::span<float> v, std::int64_t step, float lr, const AdamWConfig& config) {
  (void)params, (void)grads, (void)m, (void)v, (void)step, (void)lr, (void)config;
  BOOK_NOT_IMPLEMENTED("train.adamw_step", "exercises/04_training_baseline/adamw.cc",
                       "chapters/04_training_baseline/README.md, section AdamW");
}

}  // namespace book::train
