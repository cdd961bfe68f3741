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
};

/// Parses the stage's flags (the arguments after the program's name): `--tour` and
/// `--sizes=N,N,...` (1 to 16384 each).
/// @throws book::UsageError for anything else or a malformed size (`--sizes=5x`,
///   `--sizes=1e3`); book::HelpRequested for `--help`.
LadderOptions parse_ladder_options(const std::vector<std::string>& arguments);

}  // namespace book::gemm_cuda
