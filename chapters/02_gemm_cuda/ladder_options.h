/// @file
/// The command line of chapter 2's ladder stage (plain C++, so the CPU tests check it).
#pragma once

#include <string>
#include <vector>

namespace book::gemm_cuda {

/// The ladder stage's command line.
struct LadderOptions {
  bool tour = false;                               ///< the quick run (n = 4096 unless --sizes)
  std::vector<int> sizes{1024, 2048, 4096, 8192};  ///< the sizes timed (m = n = k) on a GPU
  /// Rungs left out of the correctness and timing runs, by name (tools/gpu/run.sh passes
  /// `--skip=wgmma_tma` when rung 10's test failed: a rung that hangs or faults would take the
  /// rest of the stage with it).
  std::vector<std::string> skip;
};

/// Parses the stage's flags (the arguments after the program's name): `--tour`,
/// `--sizes=N,N,...` (1 to 16384 each) and `--skip=NAME,...`.
/// @throws book::UsageError for anything else or a malformed size (`--sizes=5x`,
///   `--sizes=1e3`); book::HelpRequested for `--help`.
LadderOptions parse_ladder_options(const std::vector<std::string>& arguments);

/// Checks that every name in `skip` is one of `rungs` (the ladder's rung names).
/// @throws book::UsageError naming the unknown rung and listing the valid ones.
void check_skipped_rungs(const std::vector<std::string>& skip,
                         const std::vector<std::string>& rungs);

}  // namespace book::gemm_cuda
