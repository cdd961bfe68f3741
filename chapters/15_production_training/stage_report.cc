// "The report": every run side by side, in the four layers a lead reads.
#include <algorithm>
#include <iostream>

#include "chapters/01_gemm_cpu/peak.h"
#include "chapters/15_production_training/stage.h"

namespace book::prod::stage {

double ranks_peak_gflops(int ranks) { return gemm::measure_fp32_peak_gflops(std::max(1, ranks)); }

void report_section(const StageOptions& options, const std::vector<RunReport>& runs) {
  std::cout << "\n## The report\n\n"
            << "Every run of the stage in the four layers a lead reads, top down: business "
               "(time-to-converge: steps and s to the target validation loss), throughput "
               "(tokens/s, and per rank: \"per GPU\"), system (MFU, HFU: against the ranks' "
               "measured FP32 peak together), stability (restarts, steps redone, uptime, "
               "goodput); then the training loss at fixed steps, the proof that two rows trained "
               "the same model.\n\n";
  print_reports(runs, "ch15_report");
  if (!options.tour) return;
  const RunReport& first = runs.front();
  const RunReport* failed = nullptr;  // the first run with restarts: the stability layer's case
  for (const RunReport& r : runs)
    if (r.restarts > 0 && failed == nullptr) failed = &r;
  std::cout << "tour: 15 | the report's four layers: " << first.name
            << (failed ? " / " + failed->name : "") << " | converged in "
            << (first.converge_steps < 0 ? "never"
                                         : std::to_string(first.converge_steps) + " steps")
            << ", " << fixed(first.tokens_per_s_per_rank, 0) << " tokens/s/rank, MFU "
            << fixed(100 * first.mfu, 1) << "%";
  if (failed)
    std::cout << " / " << failed->restarts << " restarts, uptime " << fixed(100 * failed->uptime, 1)
              << "%, goodput " << fixed(100 * failed->goodput, 1) << "%";
  std::cout << " | report time-to-converge, tokens/s/GPU, MFU/HFU and restarts/uptime, not one "
               "of them alone\n";
}

}  // namespace book::prod::stage
