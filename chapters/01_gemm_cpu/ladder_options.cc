// The ladder stage's command line (ladder_steps.h).
#include "chapters/01_gemm_cpu/ladder_steps.h"
#include "common/flags.h"

namespace book::gemm::ladder {

Options parse_options(const std::vector<std::string>& arguments) {
  Options options;
  bool big = false;
  Flags flags("ladder",
              "every rung of the CPU GEMM ladder, checked and timed against OpenBLAS and this "
              "machine's measured ceilings");
  flags.add("sizes", &options.sizes, "the sizes n to run (m = n = k), comma-separated")
      .range(1, 16384);
  flags.add("big", &big, "also run n = 4096");
  flags.add("tour", &options.tour, "the quick run for the tour: n = 1024, and the tour lines");
  flags.add("slow", &options.slow_everywhere, "run rungs 1-3 above n = 1024 too (minutes)");
  flags.parse(arguments);
  if (options.tour && !flags.was_set("sizes")) options.sizes = {1024};
  if (big) options.sizes.push_back(4096);
  return options;
}

}  // namespace book::gemm::ladder
