// The production stage's command line.
#include "chapters/15_production_training/stage.h"

namespace book::prod::stage {

StageOptions parse_stage_options(int argc, const char* const* argv) {
  StageOptions o;
  Flags flags("production",
              "training like production: the A/B experiment, surviving failures, the report");
  flags.add("tour", &o.tour, "the tour's short run (fewer steps and repetitions)");
  flags.parse(argc, argv);
  return o;
}

}  // namespace book::prod::stage
