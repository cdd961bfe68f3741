/// @file
/// The busbw stages: their command line (threads, MPI, NCCL), parsed by book::Flags (typed, with
/// ranges, so `--max-mib -1`, `--ranks abc`, an unknown flag or a flag without its value is a
/// book::UsageError that says what was wrong; book::run_main prints it and exits with 2), and the
/// threads stage in named sections, one per README section and one file each (busbw.cc calls
/// them): what one ring looks like (stage_trace.cc), the numbers on this machine
/// (stage_numbers.cc), tree against ring (stage_crossover.cc), the exact volume (stage_volume.cc).
/// Each section prints what it shows and hands back its tour lines, which the stage prints together
/// at the end.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "common/table.h"

namespace book::coll {
class Communicator;  // communicator.h
}  // namespace book::coll

namespace book::coll::stage {

/// Which stage is parsing: they share --max-mib and --tour; only the threads stage has --ranks,
/// --trace and --repetitions (under MPI the ranks are mpirun's processes).
enum class BusbwStage {
  kThreads,  ///< busbw: ranks as threads.
  kMpi,      ///< busbw_mpi: ranks as MPI processes.
  kNccl,     ///< busbw_nccl: one MPI process per GPU.
};

/// What a busbw stage was asked to do.
struct StageOptions {
  int ranks = 4;      ///< --ranks: ranks as threads (threads stage), 1 … 1024.
  int max_mib = 256;  ///< --max-mib: the largest message, in MiB.
  std::string trace;  ///< --trace: where to write Chrome traces of one ring (threads stage).
  bool tour = false;  ///< --tour: the short run whose headline lines the tour collects.
  /// --repetitions: how many times the threads stage measures every row, the rows of one size
  /// in turns (memcpy, naive, tree, ring, fused ring, memcpy, ...); the table shows the medians
  /// and their spread. 1 … 100.
  int repetitions = 5;
  /// --cluster (MPI stage only): under tools/cluster/cluster.sh, all-reduce busbw inside a node,
  /// across nodes and on the whole world instead of the sweep (stage_cluster.cc); --max-mib is 16
  /// unless given (with --tour: 4, and 3 repetitions).
  bool cluster = false;
};

/// The largest --max-mib each stage accepts: 4096 on the CPU stages (a rank holds a few buffers
/// of that size), 65536 on GPUs.
int busbw_max_mib_limit(BusbwStage stage);

/// Parses argv for `stage`. When --max-mib is not given, it is 256 (1024 on NCCL), or with --tour
/// 1 (threads), 4 (MPI), 64 (NCCL).
/// @throws book::UsageError for a bad command line; book::HelpRequested for --help.
StageOptions parse_stage_options(BusbwStage stage, int argc, const char* const* argv);

/// The headline lines `tour: 03 | … | … | …` one section hands back, each ending in a newline.
using TourLines = std::string;

/// "What one ring looks like": with --trace, one traced 4 MiB ring and fused-ring all-reduce
/// (Chrome JSON and a .tsv for trace.gp each); without it, nothing.
void trace_section(const StageOptions& options);

/// The all-reduce sweep of the threads stage: every algorithm at every size, next to memcpy.
struct Measurements {
  std::vector<std::size_t> sizes;  ///< the message sizes, in bytes, in the order measured
  /// the table: per size, memcpy alone, memcpy of every thread at once, then each algorithm
  Table table{{"size", "algorithm", "time (us)", "algbw (GB/s)", "busbw (GB/s)", "spread",
               "busbw / concurrent memcpy"}};
  std::map<std::size_t, std::map<std::string, double>> busbw;  ///< GB/s by size and algorithm
  std::map<std::size_t, double> link_gbs;  ///< a thread's concurrent memcpy, GB/s, by size
};

/// Measures the sweep of `options` on thread ranks: the rows of one size in turns, --repetitions
/// times (progress on stderr).
Measurements measure_all_reduce(const StageOptions& options);

/// "Numbers on this machine": the table (also CSV and JSON under results/); tour lines on the
/// rings' busbw against the concurrent memcpy at the largest size.
TourLines numbers_section(const StageOptions& options, const Measurements& measured);

/// "Tree and naive: latency against bandwidth": the smallest size from which the ring beats the
/// tree at every larger size too (so one noisy point does not move it), and its tour line.
TourLines crossover_section(const StageOptions& options, const Measurements& measured);

/// busbw_mpi --cluster: on the namespace cluster (cluster.h; refused with book::Error outside it),
/// the book's ring and tree and the backend's native all-reduce at a small (4 KiB), a middle and
/// the largest size, on three placements: inside a node (node 0's ranks), across nodes (one rank
/// per node) and the whole world; medians of --repetitions rounds taken in turns, the across-node
/// busbw against the link's rate and the raw TCP ceiling. Rank 0 prints the table and writes
/// ch03_cluster_busbw.csv; every rank of `world` calls it. Returns the tour lines (rank 0).
TourLines cluster_section(const StageOptions& options, Communicator& world);

/// "The exact volume": bytes one rank sends in a 1 MiB ring all-reduce, counted (a tour line only).
TourLines volume_section(const StageOptions& options);

}  // namespace book::coll::stage
