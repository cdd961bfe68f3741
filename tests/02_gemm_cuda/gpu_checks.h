// The GPU check of one rung: fresh random inputs at awkward shapes, C poisoned with NaN, every
// element compared with the double reference within the stated bound (runners.h). A failure
// prints the first wrong element and the pattern of all of them (error_pattern.h), whose tags
// tools/gpu/run.sh turns into a diagnosis hint.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "chapters/02_gemm_cuda/kernels.h"
#include "chapters/02_gemm_cuda/runners.h"
#include "common/cuda.h"

namespace book::gemm_cuda::testing {

// Awkward sizes for the GPU: below one tile, one past a tile, primes, k and n not multiples of
// 4 or 8 (the masked paths), and a 16-byte-aligned shape with ragged tiles (the wide paths).
inline std::vector<GemmShape> gpu_shapes() {
  return {{1, 1, 1}, {33, 47, 19}, {131, 200, 72}, {257, 129, 303}, {128, 256, 64}, {77, 93, 45}};
}

// The sanitizer's shapes (compute-sanitizer makes every kernel one to two orders of magnitude
// slower): small, but each with more than one block in both directions for the 128-wide tiles,
// ragged K tiles, and one of them on the wide (16-byte) paths, one on the masked ones.
inline std::vector<GemmShape> sanitizer_shapes() { return {{131, 136, 72}, {133, 141, 37}}; }

// The rungs that stage tiles in shared memory: what racecheck and synccheck look at.
inline std::vector<std::string> shared_memory_rungs() {
  return {"shared_tile", "blocktile_1d", "register_2d", "vectorised",
          "warptile",    "wmma_bf16",    "mma_cp_async"};
}

inline const Rung& find_rung(const std::vector<Rung>& rungs, const std::string& name) {
  for (const Rung& rung : rungs)
    if (rung.name == name) return rung;
  throw Error("no rung named " + name);
}

// Checks one rung at `shapes`; every failure names the rung, the seed, the first wrong element
// and the pattern of the wrong ones.
inline void expect_rung_correct(const std::string& name,
                                const std::vector<GemmShape>& shapes = gpu_shapes()) {
  Cublas cublas;
  const std::vector<Rung> rungs = ladder_rungs(cublas);
  const Rung& rung = find_rung(rungs, name);
  std::uint64_t seed = 2024;
  for (GemmShape s : shapes) {
    const Comparison result = check_rung(rung, s, ++seed);
    EXPECT_EQ(result.bad, 0) << "rung " << rung.rung << " (" << name << ") seed " << seed << ": "
                             << result.bad << " wrong elements; first: " << result.first
                             << "; pattern: " << result.pattern;
  }
}

// Without a GPU a kernel cannot be checked, but an untouched stub can still be told from a
// started exercise: a stub throws NotImplemented right after check_gemm_args, before any CUDA
// call. So the launcher is called once on a 1 × 1 × 1 problem whose "device" pointers are host
// scalars (harmless to read or write if a launcher did): a stub's NotImplemented propagates and
// the graded test reads "not started" (exit status 1, never PASSED); a started launcher fails at
// its first CUDA call or returns, and the test is skipped as needing a GPU.
// `launch` has Rung::run's signature.
template <typename Launch>
void probe_stub_without_gpu(Launch launch) {
  const float a = 1, b = 1;  // wide enough for a BF16 rung's one element too
  float c = 0;
  try {
    launch(static_cast<const void*>(&a), static_cast<const void*>(&b), &c, GemmShape{1, 1, 1},
           cudaStream_t{});
  } catch (const NotImplemented&) {
    throw;
  } catch (...) {
  }
}

}  // namespace book::gemm_cuda::testing

/// First statement of a graded GPU test: with no GPU, an untouched stub is reported "not started"
/// (the NotImplemented of `launch`, a callable with Rung::run's signature, propagates); a started
/// exercise is skipped as needing a GPU.
#define BOOK_REQUIRE_GPU_FOR_EXERCISE(launch)                     \
  do {                                                            \
    if (::book::cuda::device_count() == 0)                        \
      ::book::gemm_cuda::testing::probe_stub_without_gpu(launch); \
    BOOK_REQUIRE_GPU();                                           \
  } while (false)

namespace book::gemm_cuda::testing {

// Rung::run-shaped callers of the three exercise launchers, for BOOK_REQUIRE_GPU_FOR_EXERCISE.
inline void launch_shared_tile(const void* a, const void* b, float* c, GemmShape s,
                               cudaStream_t stream) {
  sgemm_shared_tile(static_cast<const float*>(a), static_cast<const float*>(b), c, s, stream);
}
inline void launch_register_2d(const void* a, const void* b, float* c, GemmShape s,
                               cudaStream_t stream) {
  sgemm_register_2d(static_cast<const float*>(a), static_cast<const float*>(b), c, s, stream);
}
inline void launch_wmma(const void* a, const void* b, float* c, GemmShape s, cudaStream_t stream) {
  gemm_bf16_wmma(static_cast<const __nv_bfloat16*>(a), static_cast<const __nv_bfloat16*>(b), c, s,
                 stream);
}

}  // namespace book::gemm_cuda::testing
