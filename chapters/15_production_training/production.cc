// bazel run -c opt //chapters/15_production_training:production [-- --tour]   (--help: the flags)
//
// Training like production: the A/B experiment that proves an optimisation (the loss first, then
// tokens/s, then where the time went), a supervisor that survives killed, hung and corrupted runs
// with nothing lost, and the report a lead wants for every run. The steps are in stage.h.
#include <vector>

#include "chapters/15_production_training/stage.h"
#include "common/machine_load.h"
#include "common/main.h"

namespace {

using namespace book::prod;
using namespace book::prod::stage;

int body(int argc, char** argv) {
  const StageOptions options = parse_stage_options(argc, argv);
  book::print_machine_load();
  std::vector<RunReport> runs;
  const ExperimentSection experiment = run_experiment_section(options);
  runs.insert(runs.end(), experiment.reports.begin(), experiment.reports.end());
  const std::vector<RunReport> supervised = run_failures_section(options);
  runs.insert(runs.end(), supervised.begin(), supervised.end());
  report_section(options, runs);
  p99_section(options);
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return book::run_main(argc, argv, body); }
