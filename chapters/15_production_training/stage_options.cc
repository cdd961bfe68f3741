// The production stage's command line.
#include "chapters/15_production_training/stage.h"

namespace book::prod::stage {

StageOptions parse_stage_options(int argc, const char* const* argv) {
  StageOptions o;
  Flags flags("production",
              "training like production: the A/B experiment, surviving failures, the report");
  flags.add("tour", &o.tour, "the tour's short run (fewer steps and repetitions)");
  // --- Surviving failures (failures_options.h): flags --sup-* ---
  add_failures_flags(flags, &o.failures, "sup-");
  // --- end of Surviving failures ---
  flags.parse(argc, argv);
  if (o.tour) shorten_for_tour(flags, &o.failures, "sup-");
  return o;
}

}  // namespace book::prod::stage
