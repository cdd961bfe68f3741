// "The report": every run side by side, in the four layers a lead reads.
#include <algorithm>
#include <iostream>

#include "chapters/01_gemm_cpu/peak.h"
#include "chapters/15_production_training/stage.h"

namespace book::prod::stage {

double ranks_peak_gflops(int ranks) { return gemm::measure_fp32_peak_gflops(std::max(1, ranks)); }

void report_section(const StageOptions& options, const std::vector<RunReport>& runs) {
  (void)options;
  std::cout << "\n## The report\n\n"
            << "business: time-to-converge | throughput: tokens/s, per rank | system: MFU, HFU | "
               "stability: restarts, uptime, goodput\n\n";
  print_reports(runs, "ch15_report");
}

}  // namespace book::prod::stage
