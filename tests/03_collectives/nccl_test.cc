// The NCCL backend on one GPU, one rank: it links, it starts, and its collectives return the right
// values. Skips (with the reason) where there is no GPU. Many-GPU runs: see the chapter README.
#include <gtest/gtest.h>

#include <vector>

#include "chapters/03_collectives/nccl.h"
#include "common/rng.h"
#include "common/testing/gpu.h"

namespace book::coll {
namespace {

TEST(Nccl, SingleRankCollectivesOnOneGpu) {
  BOOK_REQUIRE_GPU();
  NcclCommunicator comm(0, 1, nccl_unique_id(), 0, "nccl-smoke");
  EXPECT_EQ(comm.size(), 1);
  const std::size_t count = 1037;
  std::vector<float> host(count), back(count, -1.0f);
  Rng rng(41);
  fill_uniform(std::span<float>(host), rng);
  float* device = nullptr;
  BOOK_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&device), count * sizeof(float)));
  BOOK_CUDA_CHECK(cudaMemcpy(device, host.data(), count * sizeof(float), cudaMemcpyHostToDevice));
  comm.all_reduce(Buffer(device, count, DType::kF32), ReduceOp::kSum);  // one rank: unchanged
  comm.all_reduce(Buffer(device, count, DType::kF32), ReduceOp::kAvg, Algorithm::kNative);
  comm.broadcast(Buffer(device, count, DType::kF32), 0);
  comm.barrier();
  BOOK_CUDA_CHECK(cudaMemcpy(back.data(), device, count * sizeof(float), cudaMemcpyDeviceToHost));
  for (std::size_t i = 0; i < count; ++i)
    ASSERT_EQ(back[i], host[i]) << "element " << i << " changed in a one-rank all-reduce";
  EXPECT_THROW(
      comm.all_reduce(Buffer(device, count, DType::kF32), ReduceOp::kSum, Algorithm::kRing), Error)
      << "NCCL runs its own algorithms";
  BOOK_CUDA_CHECK(cudaFree(device));
}

}  // namespace
}  // namespace book::coll
