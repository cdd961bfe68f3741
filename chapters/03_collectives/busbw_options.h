/// @file
/// The command line of the busbw stages (threads, MPI, NCCL), parsed by book::Flags: typed, with
/// ranges, so `--max-mib -1`, `--ranks abc`, an unknown flag or a flag without its value is a
/// book::UsageError that says what was wrong (book::run_main prints it and exits with 2).
#pragma once

#include <string>

namespace book::coll {

/// Which stage is parsing: they share --max-mib and --tour; only the threads stage has --ranks,
/// --trace and --repetitions (under MPI the ranks are mpirun's processes).
enum class BusbwStage {
  kThreads,  ///< busbw: ranks as threads.
  kMpi,      ///< busbw_mpi: ranks as MPI processes.
  kNccl,     ///< busbw_nccl: one MPI process per GPU.
};

/// What a busbw stage was asked to do.
struct BusbwOptions {
  int ranks = 4;      ///< --ranks: ranks as threads (threads stage), 1 … 1024.
  int max_mib = 256;  ///< --max-mib: the largest message, in MiB.
  std::string trace;  ///< --trace: where to write Chrome traces of one ring (threads stage).
  bool tour = false;  ///< --tour: the short run whose headline lines the tour collects.
  /// --repetitions: how many times the threads stage measures every row, the rows of one size
  /// in turns (memcpy, naive, tree, ring, fused ring, memcpy, ...); the table shows the medians
  /// and their spread. 1 … 100.
  int repetitions = 5;
};

/// The largest --max-mib each stage accepts: 4096 on the CPU stages (a rank holds a few buffers
/// of that size), 65536 on GPUs.
int busbw_max_mib_limit(BusbwStage stage);

/// Parses argv for `stage`. When --max-mib is not given, it is 256 (1024 on NCCL), or with --tour
/// 1 (threads), 4 (MPI), 64 (NCCL).
/// @throws book::UsageError for a bad command line; book::HelpRequested for --help.
BusbwOptions parse_busbw_options(BusbwStage stage, int argc, const char* const* argv);

}  // namespace book::coll
