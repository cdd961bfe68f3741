// The scaffolding of recovery.h: Daly's refinement and the lost-work model (the exercises'
// bodies are in solutions/15_production_training/recovery.cc).
#include "chapters/15_production_training/recovery.h"

#include <cmath>

#include "common/check.h"

namespace book::prod {
namespace {

void check_positive(const char* who, const char* what, double value) {
  BOOK_CHECK(std::isfinite(value) && value > 0,
             who << ": " << what << " must be a finite number of seconds > 0, got " << value);
}

}  // namespace

double daly_interval(double checkpoint_seconds, double mtbf_seconds) {
  check_positive("daly_interval", "the checkpoint cost", checkpoint_seconds);
  check_positive("daly_interval", "the MTBF", mtbf_seconds);
  const double d = checkpoint_seconds, m = mtbf_seconds;
  if (d >= 2 * m) return m;
  const double r = d / (2 * m);
  return std::sqrt(2 * d * m) * (1 + std::sqrt(r) / 3 + r / 9) - d;
}

LostWork expected_lost_work(double work_seconds, double interval_seconds, double checkpoint_seconds,
                            double failures) {
  check_positive("expected_lost_work", "the work", work_seconds);
  check_positive("expected_lost_work", "the interval", interval_seconds);
  check_positive("expected_lost_work", "the checkpoint cost", checkpoint_seconds);
  BOOK_CHECK(
      std::isfinite(failures) && failures >= 0,
      "expected_lost_work: the number of failures must be finite and >= 0, got " << failures);
  LostWork lost;
  lost.checkpoint_seconds = work_seconds / interval_seconds * checkpoint_seconds;
  lost.rework_seconds = failures * interval_seconds / 2;
  return lost;
}

}  // namespace book::prod
