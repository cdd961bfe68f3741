#include "chapters/02_gemm_cuda/runners.h"

#include "chapters/02_gemm_cuda/tiles.h"
#include "chapters/02_gemm_cuda/wgmma.h"

namespace book::gemm_cuda {

namespace {

using bf16 = ::__nv_bfloat16;

Rung fp32(int number, std::string name, std::string exercise, TileSize tile,
          void (*fn)(const float*, const float*, float*, GemmShape, cudaStream_t)) {
  return {number,
          std::move(name),
          DType::kF32,
          std::move(exercise),
          [fn](const void* a, const void* b, float* c, GemmShape s, cudaStream_t stream) {
            fn(static_cast<const float*>(a), static_cast<const float*>(b), c, s, stream);
          },
          nullptr,
          tile};
}

Rung half(int number, std::string name, std::string exercise, TileSize tile,
          void (*fn)(const bf16*, const bf16*, float*, GemmShape, cudaStream_t)) {
  return {number,
          std::move(name),
          DType::kBF16,
          std::move(exercise),
          [fn](const void* a, const void* b, float* c, GemmShape s, cudaStream_t stream) {
            fn(static_cast<const bf16*>(a), static_cast<const bf16*>(b), c, s, stream);
          },
          nullptr,
          tile};
}

constexpr TileSize kSquare{SquareTiles::kSide, SquareTiles::kSide};
constexpr TileSize k1d{BlockTile1d::kBM, BlockTile1d::kBN};
constexpr TileSize k2d{BlockTile2d::kBM, BlockTile2d::kBN};
constexpr TileSize kWarp{WarpTile::kBM, WarpTile::kBN};
constexpr TileSize kTensor{TensorTile::kBM, TensorTile::kBN};
constexpr TileSize kWgmma{WgmmaTile::kBM, WgmmaTile::kBN};

}  // namespace

std::vector<Rung> ladder_rungs(Cublas& cublas) {
  std::vector<Rung> rungs;
  rungs.push_back({0, "cublas_sgemm", DType::kF32, "",
                   [&cublas](const void* a, const void* b, float* c, GemmShape s, cudaStream_t st) {
                     cublas.sgemm(static_cast<const float*>(a), static_cast<const float*>(b), c, s,
                                  st);
                   }});
  rungs.push_back({0, "cublas_bf16", DType::kBF16, "",
                   [&cublas](const void* a, const void* b, float* c, GemmShape s, cudaStream_t st) {
                     cublas.gemm_bf16(static_cast<const bf16*>(a), static_cast<const bf16*>(b), c,
                                      s, st);
                   }});
  rungs.push_back(fp32(1, "naive", "", kSquare, sgemm_naive));
  rungs.push_back(fp32(2, "coalesced", "", kSquare, sgemm_coalesced));
  rungs.push_back(fp32(3, "shared_tile", "cuda_gemm.shared_tile", kSquare, sgemm_shared_tile));
  rungs.push_back(fp32(4, "blocktile_1d", "", k1d, sgemm_blocktile_1d));
  rungs.push_back(fp32(5, "register_2d", "cuda_gemm.register_2d", k2d, sgemm_register_2d));
  rungs.push_back(fp32(6, "vectorised", "", k2d, sgemm_vectorised));
  rungs.push_back(fp32(7, "warptile", "", kWarp, sgemm_warptile));
  rungs.push_back(half(8, "wmma_bf16", "cuda_gemm.wmma", kTensor, gemm_bf16_wmma));
  rungs.push_back(half(9, "mma_cp_async", "", kTensor, gemm_bf16_mma));
  Rung hopper = half(10, "wgmma_tma", "", kWgmma, gemm_bf16_wgmma);
  hopper.unavailable = wgmma_unavailable_reason;  // Hopper only
  rungs.push_back(std::move(hopper));
  return rungs;
}

DeviceProblem::DeviceProblem(const GemmProblem& p)
    : a(p.a.size()), b(p.b.size()), a16(p.a16.size()), b16(p.b16.size()) {
  a.copy_from_host(p.a);
  b.copy_from_host(p.b);
  a16.copy_from_host(p.a16);
  b16.copy_from_host(p.b16);
}

const void* DeviceProblem::a_for(DType input) const {
  BOOK_CHECK(input == DType::kF32 || input == DType::kBF16,
             "the ladder's rungs read f32 or bf16 inputs, not " << dtype_name(input));
  return input == DType::kF32 ? static_cast<const void*>(a.data()) : a16.data();
}
const void* DeviceProblem::b_for(DType input) const {
  BOOK_CHECK(input == DType::kF32 || input == DType::kBF16,
             "the ladder's rungs read f32 or bf16 inputs, not " << dtype_name(input));
  return input == DType::kF32 ? static_cast<const void*>(b.data()) : b16.data();
}

std::vector<float> run_poisoned(const Rung& rung, const GemmProblem& problem) {
  const GemmShape s = problem.shape;
  DeviceProblem device(problem);
  cuda::DeviceBuffer<float> c(std::size_t(s.m) * s.n);
  c.fill_poison();  // NaN everywhere
  rung.run(device.a_for(rung.input), device.b_for(rung.input), c.data(), s, nullptr);
  BOOK_CUDA_CHECK(cudaGetLastError());
  BOOK_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<float> out(c.size());
  c.copy_to_host(out);
  return out;
}

Comparison check_rung(const Rung& rung, GemmShape shape, std::uint64_t seed) {
  const GemmProblem problem = random_problem(shape, seed);
  const bool bf16 = rung.input == DType::kBF16;
  const Reference ref = reference_gemm(problem, bf16);
  return compare_gemm(run_poisoned(rung, problem), ref, shape, bf16 ? 2.0 : 1.0, rung.tile);
}

}  // namespace book::gemm_cuda
