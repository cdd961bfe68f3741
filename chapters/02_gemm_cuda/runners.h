/// @file
/// The ladder as a list: every rung (cuBLAS as rung 0) behind one signature, device buffers, and
/// the check of one rung against the double-precision reference. Used by the GPU tests and the
/// stage. Needs the CUDA runtime (a GPU only to run).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "chapters/02_gemm_cuda/kernels.h"
#include "chapters/02_gemm_cuda/reference.h"
#include "common/cuda.h"
#include "common/device_buffer.h"
#include "common/dtype.h"

namespace book::gemm_cuda {

/// One rung behind a uniform signature: `a` and `b` point to float or BF16 device data
/// according to `input`; `c` is FP32.
struct Rung {
  int rung = 0;               ///< 0 for cuBLAS, 1–10 for the ladder.
  std::string name;           ///< e.g. "cublas_sgemm", "warptile".
  DType input = DType::kF32;  ///< What `a` and `b` hold: kF32, or kBF16 (FP32 accumulation).
  std::string exercise_id;    ///< The exercise it grades, or empty.
  /// Launches it on `stream` (asynchronous).
  std::function<void(const void* a, const void* b, float* c, GemmShape shape, cudaStream_t stream)>
      run;
  /// For a rung that only some GPUs can run (rung 10: Hopper): why it cannot run on this one,
  /// empty if it can. Unset for the rungs every supported GPU runs.
  std::function<std::string()> unavailable = nullptr;
  /// The block tile of C it computes (0 × 0 for cuBLAS): what a failed check reads the pattern
  /// of wrong elements against (Comparison::pattern).
  TileSize tile{};
};

/// Why `rung` cannot run on the current GPU (its `unavailable` answer), or empty.
inline std::string unavailable_reason(const Rung& rung) {
  return rung.unavailable ? rung.unavailable() : std::string();
}

/// Rung 0 (cuBLAS SGEMM, cuBLAS BF16) and rungs 1–10, all calling into `cublas` for rung 0.
std::vector<Rung> ladder_rungs(Cublas& cublas);

/// The inputs of a problem on the device, in FP32 and BF16.
struct DeviceProblem {
  /// Uploads `problem`.
  explicit DeviceProblem(const GemmProblem& problem);
  cuda::DeviceBuffer<float> a;       ///< A in FP32.
  cuda::DeviceBuffer<float> b;       ///< B in FP32.
  cuda::DeviceBuffer<BFloat16> a16;  ///< A in BF16.
  cuda::DeviceBuffer<BFloat16> b16;  ///< B in BF16.
  /// The A pointer a rung whose inputs are `input` reads (kF32 or kBF16).
  const void* a_for(DType input) const;
  /// The B pointer a rung whose inputs are `input` reads (kF32 or kBF16).
  const void* b_for(DType input) const;
};

/// Runs `rung` once on `problem` with C poisoned (every byte 0xFF: a NaN) and returns C.
std::vector<float> run_poisoned(const Rung& rung, const GemmProblem& problem);

/// Runs `rung` on a fresh random problem (seed `seed`) and compares every element with the
/// double reference: factor 1 of γ_k·|A|·|B| for FP32 rungs, 2 for BF16 ones (tensor cores may
/// add in a different order inside an instruction; the inputs are BF16-exact on both sides).
Comparison check_rung(const Rung& rung, GemmShape shape, std::uint64_t seed);

}  // namespace book::gemm_cuda
