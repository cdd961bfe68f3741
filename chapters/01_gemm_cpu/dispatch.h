/// @file
/// The ladder's public entry point: names the rungs, checks arguments once, calls the chosen rung.
#pragma once

#include <span>
#include <string>

namespace book::gemm {

/// The rungs of the ladder, in the order the README climbs them.
enum class Rung {
  kNaive = 1,    ///< gemm.01 i-j-k
  kReorder,      ///< gemm.02 i-k-j
  kBlocked,      ///< gemm.03 cache tiles
  kMicrokernel,  ///< gemm.04 AVX2 6×16 register tile
  kPacked,       ///< gemm.05 packed panels
  kFiveLoops,    ///< gemm.06 BLIS five loops
  kEdges,        ///< gemm.07 padded edges (the engine with the track's edge pieces)
  kAvx512,       ///< gemm.08 AVX-512 kernel chosen at run time (the track's kernel in the engine)
  kThreads,      ///< gemm.09 all hardware threads (the track's per-thread loops in the engine)
};

/// Every rung, in ladder order.
std::span<const Rung> all_rungs();

/// A short name, e.g. "05 packed".
std::string rung_name(Rung rung);

/// The exercise ID, e.g. "gemm.05".
std::string rung_exercise_id(Rung rung);

/// Whether the rung runs on more than one thread.
bool rung_is_multithreaded(Rung rung);

/// C = A·B with the chosen rung (row-major; see gemm.h). Rungs 7 to 9 run the engine
/// (engine/engine.h) with the track's piece of gemm.h plugged in. Throws book::Error, before
/// calling the rung, if a size is not positive, a pointer is null, or lda < k, ldb < n or ldc < n.
void matmul(Rung rung, int m, int n, int k, const float* a, int lda, const float* b, int ldb,
            float* c, int ldc);

}  // namespace book::gemm
