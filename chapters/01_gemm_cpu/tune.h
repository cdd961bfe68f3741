/// @file
/// Block sizes for this machine: the candidates the `tune` stage tries, and the engine run with
/// any of them. The defaults in chapters/01_gemm_cpu/engine/kernels.cc were measured on one
/// machine; `bazel run -c opt //chapters/01_gemm_cpu:tune` measures the alternatives on yours.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace book::gemm {

/// The three cache blocks of the five loops (see the README, rung 6): an A micro-panel of MR × KC
/// floats stays in L1, the packed KC × NC block of B in L2, the MC × KC block of A in L3.
struct BlockSizes {
  int mc;  ///< rows of A per block (a multiple of the kernel's MR)
  int kc;  ///< depth per block
  int nc;  ///< columns of B per block (a multiple of the kernel's NR)
};

/// The register tile of the kernel sgemm runs on this CPU (12 × 32 with AVX-512, else 6 × 16).
struct KernelShape {
  int mr;  ///< rows of C per micro-tile
  int nr;  ///< columns of C per micro-tile
};

/// The kernel sgemm uses here, and the block sizes it uses by default.
KernelShape best_kernel_shape();
/// The default block sizes of the kernel sgemm uses here (chapters/01_gemm_cpu/engine/kernels.cc).
BlockSizes default_block_sizes();

/// Candidates for a kernel of `shape` on caches of `l1_bytes` (L1d per core) and `l2_bytes` (L2
/// per core): KC from 64 to 768 with the A micro-panel at most half of L1; for each, NC (a
/// multiple of NR) with the B block at 1/8, 1/4 or 1/2 of L2; MC is `mc` in all of them (the stage
/// keeps the default: MC only matters above n = MC). Sorted, no duplicates. Throws book::Error for
/// a non-positive size, a shape that is not a kernel's, or an `mc` that is not a positive multiple
/// of MR.
std::vector<BlockSizes> block_candidates(KernelShape shape, int mc, long l1_bytes, long l2_bytes);

/// L1d and L2 per core as the C library reports them (sysconf); 0 where it does not know.
long l1d_cache_bytes();
/// L2 per core as the C library reports it (sysconf); 0 where it does not know.
long l2_cache_bytes();

/// sgemm's engine (no transposes, alpha = 1, beta = 0: C = A·B, row-major) with the best kernel
/// and the given block sizes, on `threads` threads. Throws book::Error for bad arguments (as
/// sgemm does) or block sizes the engine cannot use: mc not a positive multiple of MR, kc < 1, nc
/// not a positive multiple of NR.
void matmul_with_blocks(const BlockSizes& blocks, int threads, int m, int n, int k, const float* a,
                        int lda, const float* b, int ldb, float* c, int ldc);

/// The tune stage's command line.
struct TuneOptions {
  int n = 1024;         ///< the size timed (m = n = k)
  int threads = 1;      ///< threads the engine runs on
  std::int64_t l1 = 0;  ///< L1d bytes per core; 0: ask the C library
  std::int64_t l2 = 0;  ///< L2 bytes per core; 0: ask the C library
};

/// Parses the tune stage's flags (the arguments after the program's name): `--n` (64 to 16384),
/// `--threads` (1 to 1024), `--l1` and `--l2` (bytes, at least 1024).
/// @throws book::UsageError for anything else or a bad value; book::HelpRequested for `--help`.
TuneOptions parse_tune_options(const std::vector<std::string>& arguments);

/// "MC=2052 KC=384 NC=320", for tables and messages.
std::string describe(const BlockSizes& blocks);

}  // namespace book::gemm
