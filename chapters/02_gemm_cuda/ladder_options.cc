#include "chapters/02_gemm_cuda/ladder_options.h"

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
  flags.parse(arguments);
  if (options.tour && !flags.was_set("sizes")) options.sizes = {4096};
  return options;
}

}  // namespace book::gemm_cuda
