#include "chapters/04_training_baseline/clipping.h"

#include <cmath>

#include "chapters/04_training_baseline/profile.h"
#include "common/check.h"

namespace book::train {

double sum_of_squares(std::span<const float> grads) {
  const LayerScope scope("gradient norm and clipping");
  double sum = 0;
  for (float g : grads) sum += static_cast<double>(g) * g;
  return sum;
}

float clip_coefficient(double sum_of_squares, double max_norm) {
  BOOK_CHECK(max_norm > 0, "clip_coefficient: max_norm must be positive, got " << max_norm);
  BOOK_CHECK(sum_of_squares >= 0 || std::isnan(sum_of_squares),
             "clip_coefficient: a sum of squares cannot be negative, got " << sum_of_squares);
  const double norm = std::sqrt(sum_of_squares);
  return norm > max_norm ? static_cast<float>(max_norm / norm) : 1.0f;
}

void scale_gradients(std::span<float> grads, float factor) {
  if (factor == 1.0f) return;
  const LayerScope scope("gradient norm and clipping");
  for (float& g : grads) g *= factor;
}

double global_norm(std::span<const float> grads) { return std::sqrt(sum_of_squares(grads)); }

double clip_global_norm(std::span<float> grads, double max_norm) {
  const double squares = sum_of_squares(grads);
  scale_gradients(grads, clip_coefficient(squares, max_norm));
  return std::sqrt(squares);
}

}  // namespace book::train
