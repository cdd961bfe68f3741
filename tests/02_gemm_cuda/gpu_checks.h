// The GPU check of one rung: fresh random inputs at awkward shapes, C poisoned with NaN, every
// element compared with the double reference within the stated bound (runners.h).
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "chapters/02_gemm_cuda/runners.h"

namespace book::gemm_cuda::testing {

// Awkward sizes for the GPU: below one tile, one past a tile, primes, k and n not multiples of
// 4 or 8 (the masked paths), and a 16-byte-aligned shape with ragged tiles (the wide paths).
inline std::vector<GemmShape> gpu_shapes() {
  return {{1, 1, 1}, {33, 47, 19}, {131, 200, 72}, {257, 129, 303}, {128, 256, 64}, {77, 93, 45}};
}

inline void expect_rung_correct(const std::string& name,
                                const std::vector<GemmShape>& shapes = gpu_shapes()) {
  Cublas cublas;
  for (const Rung& rung : ladder_rungs(cublas)) {
    if (rung.name != name) continue;
    std::uint64_t seed = 2024;
    for (GemmShape s : shapes) {
      const Comparison result = check_rung(rung, s, ++seed);
      EXPECT_EQ(result.bad, 0) << "rung " << rung.rung << " (" << name << ") seed " << seed << ": "
                               << result.bad << " wrong elements; first: " << result.first;
    }
    return;
  }
  FAIL() << "no rung named " << name;
}

}  // namespace book::gemm_cuda::testing
