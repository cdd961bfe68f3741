// Exercise train.adamw_step, the reference solution.
#include <cmath>

#include "chapters/04_training_baseline/optimizer.h"
#include "common/check.h"

namespace book::train {

void adamw_step(std::span<float> params, std::span<const float> grads, std::span<float> m,
                std::span<float> v, std::int64_t step, float lr, const AdamWConfig& config) {
  BOOK_CHECK(
      grads.size() == params.size() && m.size() == params.size() && v.size() == params.size(),
      "adamw_step: params, grads, m and v must have one length, got "
          << params.size() << ", " << grads.size() << ", " << m.size() << ", " << v.size());
  BOOK_CHECK(step >= 1, "adamw_step: step counts updates from 1, got " << step);
  // The bias corrections undo the zero start of m and v: after t steps of a constant gradient g,
  // m = (1-β₁ᵗ) g, so m / (1-β₁ᵗ) = g.
  const double correction1 =
      1.0 - std::pow(static_cast<double>(config.beta1), static_cast<double>(step));
  const double correction2 =
      1.0 - std::pow(static_cast<double>(config.beta2), static_cast<double>(step));
  const float b1 = config.beta1, b2 = config.beta2;
  for (std::size_t i = 0; i < params.size(); ++i) {
    const float g = grads[i];
    m[i] = b1 * m[i] + (1.0f - b1) * g;
    v[i] = b2 * v[i] + (1.0f - b2) * g * g;
    const float m_hat = static_cast<float>(m[i] / correction1);
    const float v_hat = static_cast<float>(v[i] / correction2);
    // Decoupled: the decay uses the parameter itself, not the gradient, so Adam's per-parameter
    // scaling by 1/√v̂ does not weaken it for parameters with large gradients.
    params[i] -=
        lr * (m_hat / (std::sqrt(v_hat) + config.epsilon) + config.weight_decay * params[i]);
  }
}

}  // namespace book::train
