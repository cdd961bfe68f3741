// The busbw stages' command line.
#include "chapters/03_collectives/stage.h"

#include <string>

#include "common/flags.h"

namespace book::coll::stage {

int busbw_max_mib_limit(BusbwStage stage) { return stage == BusbwStage::kNccl ? 65536 : 4096; }

StageOptions parse_stage_options(BusbwStage stage, int argc, const char* const* argv) {
  StageOptions options;
  const bool threads = stage == BusbwStage::kThreads;
  const char* program = threads ? "busbw" : stage == BusbwStage::kMpi ? "busbw_mpi" : "busbw_nccl";
  Flags flags(program, threads ? "all-reduce bus bandwidth, nccl-tests style, ranks as threads"
                       : stage == BusbwStage::kMpi
                           ? "all-reduce bus bandwidth over MPI processes, next to MPI_Allreduce"
                           : "ncclAllReduce bus bandwidth, one MPI process per GPU");
  if (stage == BusbwStage::kNccl) options.max_mib = 1024;
  flags.add("max-mib", &options.max_mib, "the largest message, in MiB (sizes go up x4 from 1 KiB)")
      .range(1, busbw_max_mib_limit(stage));
  flags.add("tour", &options.tour, "a short run that prints the tour's headline lines");
  if (threads) {
    flags.add("ranks", &options.ranks, "ranks, as threads of this process").range(1, 1024);
    flags.add("trace", &options.trace,
              "write Chrome traces of one 4 MiB ring and fused ring to this path (and .tsv)");
    flags
        .add("repetitions", &options.repetitions,
             "measurements of every row, taken in turns with the other rows of its size; the "
             "table shows their median and spread")
        .range(1, 100);
  } else {  // declared only to say where the ranks come from
    if (stage == BusbwStage::kMpi) {
      flags.add("cluster", &options.cluster,
                "under tools/cluster/cluster.sh: busbw inside a node, across nodes and on the "
                "world, against the link's rate (--max-mib 16 unless given)");
      flags
          .add("repetitions", &options.repetitions,
               "with --cluster: rounds of every row, taken in turns; the table shows medians "
               "and spread")
          .range(1, 100);
    }
    flags.add("ranks", &options.ranks, "not here: the ranks are mpirun's processes (-np N)");
  }
  flags.parse(argc, argv);
  if (!threads && flags.was_set("ranks"))
    throw UsageError(
        "--ranks is the threads stage's: here the ranks are mpirun's processes, "
        "so write mpirun -np " +
        std::to_string(options.ranks) + " " + program);
  if (options.cluster && !flags.was_set("max-mib")) options.max_mib = options.tour ? 4 : 16;
  if (options.cluster && options.tour && !flags.was_set("repetitions")) options.repetitions = 3;
  if (stage == BusbwStage::kMpi && !options.cluster && flags.was_set("repetitions"))
    throw UsageError("--repetitions under MPI is --cluster's: add --cluster, or leave it out");
  if (options.tour && !options.cluster && !flags.was_set("max-mib"))
    options.max_mib = threads ? 1 : stage == BusbwStage::kMpi ? 4 : 64;
  return options;
}

}  // namespace book::coll::stage
