#include "chapters/04_training_baseline/precision.h"
#include "common/check.h"

namespace book::train {

bool LossScaler::update(bool found_nonfinite) {
  (void)found_nonfinite;
  BOOK_NOT_IMPLEMENTED("train.loss_scaler", "exercises/04_training_baseline/loss_scaler.cc",
                       "chapters/04_training_baseline/README.md, section Dynamic loss scaling");
}

}  // namespace book::train
