// The NCCL backend on one GPU, one rank: it links, it starts, its collectives return the right
// values, and the calls that reduce locally (sendrecv_reduce, reduce_local) do it on the device,
// as the host's reduce_into() would. Skips (with the reason) where there is no GPU. The logic
// around the calls (checks, groups, aborts) is nccl_logic_test, which needs no GPU. Many-GPU
// runs: see the chapter README.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <vector>

#include "chapters/03_collectives/nccl.h"
#include "common/device_buffer.h"
#include "common/rng.h"
#include "common/testing/expect_error.h"
#include "common/testing/gpu.h"

namespace book::coll {
namespace {

template <typename T>
std::vector<T> download(const cuda::DeviceBuffer<T>& device) {
  std::vector<T> host(device.size());
  device.copy_to_host(host);
  return host;
}

TEST(Nccl, SingleRankCollectivesOnOneGpu) {
  BOOK_REQUIRE_GPU();
  NcclCommunicator comm(0, 1, nccl_unique_id(), 0, "nccl-smoke");
  EXPECT_EQ(comm.size(), 1);
  const std::size_t count = 1037;
  std::vector<float> host(count);
  Rng rng(41);
  fill_uniform(std::span<float>(host), rng);
  cuda::DeviceBuffer<float> device(count);
  device.copy_from_host(host);
  comm.all_reduce(Buffer(device.data(), count, DType::kF32), ReduceOp::kSum);  // one rank: same
  comm.all_reduce(Buffer(device.data(), count, DType::kF32), ReduceOp::kAvg, Algorithm::kNative);
  comm.broadcast(Buffer(device.data(), count, DType::kF32), 0);
  comm.barrier();
  const std::vector<float> back = download(device);
  for (std::size_t i = 0; i < count; ++i)
    ASSERT_EQ(back[i], host[i]) << "element " << i << " changed in a one-rank all-reduce";
  ::book::testing::expect_error(
      [&] {
        comm.all_reduce(Buffer(device.data(), count, DType::kF32), ReduceOp::kSum,
                        Algorithm::kRing);
      },
      "NCCL runs its own algorithms");
  EXPECT_FALSE(comm.aborted());
}

// sendrecv_reduce to itself (ncclSend/ncclRecv to rank 0 in one group, then the reduce kernel)
// and reduce_local, in BF16 (FP32 arithmetic, rounded once) and FP32, against reduce_into() on
// the host; temporary() is device memory.
TEST(Nccl, SendrecvReduceAndReduceLocalMatchTheHostReduceOnTheDevice) {
  BOOK_REQUIRE_GPU();
  NcclCommunicator comm(0, 1, nccl_unique_id(), 0, "nccl-reduce");
  const std::size_t count = 4099;
  Rng rng(7);
  std::vector<float> a(count), b(count);
  fill_uniform(std::span<float>(a), rng);
  fill_uniform(std::span<float>(b), rng);
  std::vector<BFloat16> a16, b16;
  for (std::size_t i = 0; i < count; ++i)
    a16.push_back(to_bf16(a[i])), b16.push_back(to_bf16(b[i]));

  std::vector<BFloat16> expected16 = a16;
  reduce_into(std::span(expected16), std::span<const BFloat16>(b16), ReduceOp::kSum);
  cuda::DeviceBuffer<BFloat16> inout16(count), out16(count);
  inout16.copy_from_host(a16);
  out16.copy_from_host(b16);
  comm.sendrecv_reduce(ConstBuffer(out16.data(), count, DType::kBF16), 0,
                       Buffer(inout16.data(), count, DType::kBF16), 0, 3, ReduceOp::kSum);
  const std::vector<BFloat16> got16 = download(inout16);
  for (std::size_t i = 0; i < count; ++i)
    ASSERT_EQ(got16[i].bits, expected16[i].bits)
        << "element " << i << ": " << to_float(a16[i]) << " + " << to_float(b16[i]) << " expected "
        << to_float(expected16[i]) << ", got " << to_float(got16[i]);

  std::vector<float> expected = a;
  reduce_into(std::span(expected), std::span<const float>(b), ReduceOp::kMax);
  cuda::DeviceBuffer<float> dst(count), src(count);
  dst.copy_from_host(a);
  src.copy_from_host(b);
  comm.reduce_local(Buffer(dst.data(), count, DType::kF32),
                    ConstBuffer(src.data(), count, DType::kF32), ReduceOp::kMax);
  const std::vector<float> got = download(dst);
  for (std::size_t i = 0; i < count; ++i)
    ASSERT_EQ(got[i], expected[i]) << "element " << i << ": max(" << a[i] << ", " << b[i] << ")";

  const Buffer scratch = comm.temporary(100, DType::kF32);
  cudaPointerAttributes attributes{};
  ASSERT_EQ(cudaPointerGetAttributes(&attributes, scratch.data), cudaSuccess);
  EXPECT_EQ(attributes.type, cudaMemoryTypeDevice) << "temporary() must be device memory";
}

}  // namespace
}  // namespace book::coll
