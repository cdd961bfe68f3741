// The memory stage's command line, and the one number format its tables share.
#include "chapters/09_memory_accounting/stage.h"
#include "common/flags.h"
#include "common/table.h"

namespace book::mem::stage {

StageOptions parse_stage_options(int argc, const char* const* argv) {
  StageOptions o;
  Flags flags("memory", "chapter 9: training memory measured, predicted, and cut");
  flags.add("tour", &o.tour, "print the chapter's headline lines for //:tour");
  flags.add("gpu-gib", &o.gpu_gib, "the GPU's memory for the ladder's 'fits' column")
      .range(1, 4096);
  flags.add("steps", &o.steps, "training steps per measured configuration").range(1, 100);
  flags.parse(argc, argv);
  check_gpu_holds_rl(o.gpu_gib);
  return o;
}

std::string gib(std::uint64_t bytes) { return fixed(static_cast<double>(bytes) / (1u << 30), 2); }

}  // namespace book::mem::stage
