// The chapter's stage: an nccl-tests-style all-reduce table on the threads backend, naive vs tree
// vs ring vs fused ring at every size, with this machine's memcpy bandwidth beside it (one thread
// alone, and each of N threads copying at once: a rank's "link" here). The sections are in
// stage.h, one file each, in the order run() calls them.
//
//   bazel run -c opt //chapters/03_collectives:busbw                    # 1 KiB … 256 MiB
//   bazel run -c opt //chapters/03_collectives:busbw -- --tour          # quick, with tour lines
//   bazel run -c opt //chapters/03_collectives:busbw -- --trace /tmp/ring.json
//   options: --ranks N (default 4), --max-mib M (default 256), --repetitions R (default 5);
//   --help lists them
#include <cstdio>

#include "chapters/03_collectives/stage.h"
#include "common/machine_load.h"
#include "common/main.h"

namespace book::coll::stage {
namespace {

int run(int argc, char** argv) {
  const StageOptions options = parse_stage_options(BusbwStage::kThreads, argc, argv);
  print_machine_load();
  if (options.tour)
    std::printf(
        "tour-config: 03 | busbw --tour: %d ranks as threads, all algorithms from 1 KiB to "
        "%d MiB, both rings at 64 MiB (the chapter's table: up to 256 MiB)\n",
        options.ranks, options.max_mib);
  trace_section(options);
  const Measurements measured = measure_all_reduce(options);
  const TourLines bandwidth = numbers_section(options, measured);
  const TourLines crossover = crossover_section(options, measured);
  const TourLines volume = volume_section(options);
  // The tour lines together at the end, in the tour's order.
  std::printf("%s%s%s", volume.c_str(), bandwidth.c_str(), crossover.c_str());
  return 0;
}

}  // namespace
}  // namespace book::coll::stage

int main(int argc, char** argv) { return book::run_main(argc, argv, book::coll::stage::run); }
