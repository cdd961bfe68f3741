// The GPU check of one rung: fresh random inputs at awkward shapes, C poisoned with NaN, every
// element compared with the double reference within the stated bound (runners.h). A failure
// prints the first wrong element and the pattern of all of them (error_pattern.h), whose tags
// tools/gpu/run.sh turns into a diagnosis hint.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "chapters/02_gemm_cuda/runners.h"

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

}  // namespace book::gemm_cuda::testing
