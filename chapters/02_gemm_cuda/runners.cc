#include "chapters/02_gemm_cuda/runners.h"

namespace book::gemm_cuda {

namespace {

using bf16 = ::__nv_bfloat16;

Rung fp32(int number, std::string name, std::string exercise,
          void (*fn)(const float*, const float*, float*, GemmShape, cudaStream_t)) {
  return {number, std::move(name), Precision::kFp32, std::move(exercise),
          [fn](const void* a, const void* b, float* c, GemmShape s, cudaStream_t stream) {
            fn(static_cast<const float*>(a), static_cast<const float*>(b), c, s, stream);
          }};
}

Rung half(int number, std::string name, std::string exercise,
          void (*fn)(const bf16*, const bf16*, float*, GemmShape, cudaStream_t)) {
  return {number, std::move(name), Precision::kBf16, std::move(exercise),
          [fn](const void* a, const void* b, float* c, GemmShape s, cudaStream_t stream) {
            fn(static_cast<const bf16*>(a), static_cast<const bf16*>(b), c, s, stream);
          }};
}

}  // namespace

std::vector<Rung> ladder_rungs(Cublas& cublas) {
  std::vector<Rung> rungs;
  rungs.push_back({0, "cublas_sgemm", Precision::kFp32, "",
                   [&cublas](const void* a, const void* b, float* c, GemmShape s, cudaStream_t st) {
                     cublas.sgemm(static_cast<const float*>(a), static_cast<const float*>(b), c, s,
                                  st);
                   }});
  rungs.push_back({0, "cublas_bf16", Precision::kBf16, "",
                   [&cublas](const void* a, const void* b, float* c, GemmShape s, cudaStream_t st) {
                     cublas.gemm_bf16(static_cast<const bf16*>(a), static_cast<const bf16*>(b), c,
                                      s, st);
                   }});
  rungs.push_back(fp32(1, "naive", "", sgemm_naive));
  rungs.push_back(fp32(2, "coalesced", "", sgemm_coalesced));
  rungs.push_back(fp32(3, "shared_tile", "cuda_gemm.shared_tile", sgemm_shared_tile));
  rungs.push_back(fp32(4, "blocktile_1d", "", sgemm_blocktile_1d));
  rungs.push_back(fp32(5, "register_2d", "cuda_gemm.register_2d", sgemm_register_2d));
  rungs.push_back(fp32(6, "vectorised", "", sgemm_vectorised));
  rungs.push_back(fp32(7, "warptile", "", sgemm_warptile));
  rungs.push_back(half(8, "wmma_bf16", "cuda_gemm.wmma", gemm_bf16_wmma));
  rungs.push_back(half(9, "mma_cp_async", "", gemm_bf16_mma));
  Rung hopper = half(10, "wgmma_tma", "", gemm_bf16_wgmma);
  hopper.unavailable = wgmma_unavailable_reason;  // Hopper only
  rungs.push_back(std::move(hopper));
  return rungs;
}

DeviceProblem::DeviceProblem(const GemmProblem& p)
    : a(p.a.size()), b(p.b.size()), a16(p.a16.size()), b16(p.b16.size()) {
  a.upload(p.a.data());
  b.upload(p.b.data());
  a16.upload(p.a16.data());
  b16.upload(p.b16.data());
}

const void* DeviceProblem::a_for(Precision p) const {
  return p == Precision::kFp32 ? static_cast<const void*>(a.data()) : a16.data();
}
const void* DeviceProblem::b_for(Precision p) const {
  return p == Precision::kFp32 ? static_cast<const void*>(b.data()) : b16.data();
}

std::vector<float> run_poisoned(const Rung& rung, const GemmProblem& problem) {
  const GemmShape s = problem.shape;
  DeviceProblem device(problem);
  DeviceBuffer<float> c(std::size_t(s.m) * s.n);
  BOOK_CUDA_CHECK(cudaMemset(c.data(), 0xFF, c.size() * sizeof(float)));  // NaN everywhere
  rung.run(device.a_for(rung.precision), device.b_for(rung.precision), c.data(), s, nullptr);
  BOOK_CUDA_CHECK(cudaGetLastError());
  BOOK_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<float> out(c.size());
  c.download(out.data());
  return out;
}

Comparison check_rung(const Rung& rung, GemmShape shape, std::uint64_t seed) {
  const GemmProblem problem = random_problem(shape, seed);
  const bool bf16 = rung.precision == Precision::kBf16;
  const Reference ref = reference_gemm(problem, bf16);
  return compare_gemm(run_poisoned(rung, problem), ref, shape, bf16 ? 2.0 : 1.0);
}

}  // namespace book::gemm_cuda
