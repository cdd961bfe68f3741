#include "chapters/02_gemm_cuda/ladder_options.h"

#include <algorithm>

#include "common/flags.h"

namespace book::gemm_cuda {

LadderOptions parse_ladder_options(const std::vector<std::string>& arguments) {
  LadderOptions options;
  Flags flags("ladder",
              "chapter 2's GEMM ladder: the counted traffic and the compiler's report everywhere; "
              "correctness and timing against cuBLAS where there is a GPU");
  flags.add("tour", &options.tour, "the quick run for the tour: n = 4096, and the tour lines");
  flags.add("sizes", &options.sizes, "the sizes timed on a GPU (m = n = k), comma-separated")
      .range(1, 16384);
  flags.add("skip", &options.skip,
            "rungs to leave out of correctness and timing, by name (e.g. wgmma_tma)");
  flags.parse(arguments);
  if (options.tour && !flags.was_set("sizes")) options.sizes = {4096};
  return options;
}

void check_skipped_rungs(const std::vector<std::string>& skip,
                         const std::vector<std::string>& rungs) {
  for (const std::string& name : skip) {
    if (std::find(rungs.begin(), rungs.end(), name) != rungs.end()) continue;
    std::string valid;
    for (const std::string& rung : rungs) valid += (valid.empty() ? "" : ", ") + rung;
    throw UsageError("--skip: there is no rung named '" + name + "' (rungs: " + valid + ")");
  }
}

}  // namespace book::gemm_cuda
