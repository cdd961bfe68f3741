#include "chapters/04_training_baseline/checkpoint_checks.h"

#include <cmath>

#include "common/check.h"

namespace book::train {

void check_checkpoint_steps(const std::string& what, std::int64_t step, std::int64_t adam_step) {
  BOOK_CHECK(step >= 0 && step <= kMostCheckpointSteps && adam_step >= 0 && adam_step <= step,
             what << ": step " << step << " and Adam's step " << adam_step
                  << " are not counts of a run (need 0 <= Adam's step <= step <= 2^53: "
                     "skipped steps do not update Adam)");
}

void check_finite_section(const std::string& what, const std::string& name,
                          std::span<const float> values, bool non_negative) {
  for (std::size_t i = 0; i < values.size(); ++i)
    BOOK_CHECK(std::isfinite(values[i]) && (!non_negative || values[i] >= 0),
               what << ": section '" << name << "' holds " << values[i] << " at element " << i
                    << " (" << (non_negative ? "a finite value >= 0" : "a finite value")
                    << " expected): the run that wrote it had diverged, or the file was made by "
                       "hand; resume from an earlier checkpoint");
}

void check_data_rng_state(const std::string& what, std::span<const std::uint64_t, 4> state) {
  BOOK_CHECK(state[0] | state[1] | state[2] | state[3],
             what << ": the data stream's state is all zeros, which xoshiro never leaves (it "
                     "would draw zeros forever); the file was not written by save()");
}

LossScaler restored_scaler(const std::string& what, const LossScaler& scaler, float scale,
                           std::int32_t clean_steps) {
  LossScaler restored = scaler;
  try {
    restored.restore(scale, clean_steps);
  } catch (const Error& e) {
    throw Error(what + ": " + e.what());
  }
  return restored;
}

}  // namespace book::train
