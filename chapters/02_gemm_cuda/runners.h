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

namespace book::gemm_cuda {

/// Input precision of a rung: FP32, or BF16 with FP32 accumulation and output.
enum class Precision { kFp32, kBf16 };

/// One rung behind a uniform signature: `a` and `b` point to float or BF16 device data
/// according to `precision`; `c` is FP32.
struct Rung {
  int rung = 0;                            ///< 0 for cuBLAS, 1–10 for the ladder.
  std::string name;                        ///< e.g. "cublas_sgemm", "warptile".
  Precision precision = Precision::kFp32;  ///< What `a` and `b` hold.
  std::string exercise_id;                 ///< The exercise it grades, or empty.
  /// Launches it on `stream` (asynchronous).
  std::function<void(const void* a, const void* b, float* c, GemmShape shape, cudaStream_t stream)>
      run;
  /// For a rung that only some GPUs can run (rung 10: Hopper): why it cannot run on this one,
  /// empty if it can. Unset for the rungs every supported GPU runs.
  std::function<std::string()> unavailable = nullptr;
};

/// Why `rung` cannot run on the current GPU (its `unavailable` answer), or empty.
inline std::string unavailable_reason(const Rung& rung) {
  return rung.unavailable ? rung.unavailable() : std::string();
}

/// Rung 0 (cuBLAS SGEMM, cuBLAS BF16) and rungs 1–10, all calling into `cublas` for rung 0.
std::vector<Rung> ladder_rungs(Cublas& cublas);

/// A device allocation of `count` elements of T, freed on destruction.
template <typename T>
class DeviceBuffer {
 public:
  /// Allocates `count` elements (uninitialised).
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    void* raw = nullptr;
    BOOK_CUDA_CHECK(cudaMalloc(&raw, count * sizeof(T)));
    data_ = static_cast<T*>(raw);
  }
  ~DeviceBuffer() { cudaFree(data_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  T* data() { return data_; }                  ///< Device pointer.
  const T* data() const { return data_; }      ///< Device pointer.
  std::size_t size() const { return count_; }  ///< Elements.
  /// Copies `count` host elements in (count = size()).
  void upload(const T* host) {
    BOOK_CUDA_CHECK(cudaMemcpy(data_, host, count_ * sizeof(T), cudaMemcpyHostToDevice));
  }
  /// Copies all elements out to `host` (which has size() elements).
  void download(T* host) const {
    BOOK_CUDA_CHECK(cudaMemcpy(host, data_, count_ * sizeof(T), cudaMemcpyDeviceToHost));
  }

 private:
  T* data_ = nullptr;
  std::size_t count_ = 0;
};

/// The inputs of a problem on the device, in FP32 and BF16.
struct DeviceProblem {
  /// Uploads `problem`.
  explicit DeviceProblem(const GemmProblem& problem);
  DeviceBuffer<float> a;            ///< A in FP32.
  DeviceBuffer<float> b;            ///< B in FP32.
  DeviceBuffer<std::uint16_t> a16;  ///< A in BF16 (bits).
  DeviceBuffer<std::uint16_t> b16;  ///< B in BF16 (bits).
  /// The A pointer a rung of this precision reads.
  const void* a_for(Precision p) const;
  /// The B pointer a rung of this precision reads.
  const void* b_for(Precision p) const;
};

/// Runs `rung` once on `problem` with C poisoned (every byte 0xFF: a NaN) and returns C.
std::vector<float> run_poisoned(const Rung& rung, const GemmProblem& problem);

/// Runs `rung` on a fresh random problem (seed `seed`) and compares every element with the
/// double reference: factor 1 of γ_k·|A|·|B| for FP32 rungs, 2 for BF16 ones (tensor cores may
/// add in a different order inside an instruction; the inputs are BF16-exact on both sides).
Comparison check_rung(const Rung& rung, GemmShape shape, std::uint64_t seed);

}  // namespace book::gemm_cuda
