// The NCCL backend's calls into NCCL and CUDA (NcclApi, nccl_api.h), and the one kernel it owns:
// the element-wise reduce behind reduce_local and sendrecv_reduce on device memory. The logic
// that decides what to call is nccl_communicator.cc.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "chapters/03_collectives/nccl.h"
#include "common/check.h"
#include "common/cuda.h"

namespace book::coll {

static_assert(sizeof(NcclId) == sizeof(ncclUniqueId), "NcclId must hold an ncclUniqueId");
static_assert(nccl_result::kSuccess == ncclSuccess &&
                  nccl_result::kUnhandledCudaError == ncclUnhandledCudaError &&
                  nccl_result::kSystemError == ncclSystemError &&
                  nccl_result::kInternalError == ncclInternalError &&
                  nccl_result::kInvalidArgument == ncclInvalidArgument &&
                  nccl_result::kInvalidUsage == ncclInvalidUsage &&
                  nccl_result::kRemoteError == ncclRemoteError &&
                  nccl_result::kInProgress == ncclInProgress,
              "nccl_api.h's result codes must be NCCL's");

namespace {

ncclDataType_t nccl_type(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return ncclFloat32;
    case DType::kF64:
      return ncclFloat64;
    case DType::kBF16:
      return ncclBfloat16;
    case DType::kF16:
      return ncclFloat16;
  }
  return ncclFloat32;
}

ncclRedOp_t nccl_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return ncclSum;
    case ReduceOp::kAvg:
      return ncclAvg;
    case ReduceOp::kMax:
      return ncclMax;
  }
  return ncclSum;
}

// ---- the reduce kernel: FP32 arithmetic for the 16-bit types (FP64 for FP64), rounded once, and
// std::max's rule for kMax (the first operand unless it is less), as reduce_into() on the host.

__device__ float load(float x) { return x; }
__device__ double load(double x) { return x; }
__device__ float load(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ float load(__half x) { return __half2float(x); }
template <typename T>
__device__ T store(float x);
template <>
__device__ float store<float>(float x) {
  return x;
}
template <>
__device__ __nv_bfloat16 store<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}
template <>
__device__ __half store<__half>(float x) {
  return __float2half_rn(x);
}
__device__ double store_double(double x) { return x; }

template <typename T>
__global__ void reduce_kernel(T* dst, const T* src, std::size_t n, bool take_max) {
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const auto a = load(dst[i]), b = load(src[i]);
    const auto r = take_max ? (a < b ? b : a) : a + b;
    if constexpr (std::is_same_v<T, double>)
      dst[i] = store_double(r);
    else
      dst[i] = store<T>(r);
  }
}

template <typename T>
void launch_reduce(void* dst, const void* src, std::size_t n, bool take_max, cudaStream_t stream) {
  if (n == 0) return;
  const int threads = 256;
  const int blocks = static_cast<int>(std::min<std::size_t>((n + threads - 1) / threads, 4096));
  reduce_kernel<T><<<blocks, threads, 0, stream>>>(static_cast<T*>(dst), static_cast<const T*>(src),
                                                   n, take_max);
  BOOK_CUDA_CHECK(cudaGetLastError());
}

// ---- the real API

class RealNcclApi final : public NcclApi {
 public:
  void set_device(int device) override { BOOK_CUDA_CHECK(cudaSetDevice(device)); }
  CUstream_st* create_stream() override {
    cudaStream_t stream = nullptr;
    BOOK_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    return stream;
  }
  void destroy_stream(CUstream_st* stream) noexcept override { cudaStreamDestroy(stream); }
  StreamState query_stream(CUstream_st* stream, std::string* error) override {
    const cudaError_t status = cudaStreamQuery(stream);
    if (status == cudaSuccess) return StreamState::kDone;
    if (status == cudaErrorNotReady) return StreamState::kBusy;
    if (error) *error = std::string(cudaGetErrorName(status)) + ": " + cudaGetErrorString(status);
    return StreamState::kFailed;
  }
  void* device_alloc(std::size_t bytes) override {
    void* data = nullptr;
    BOOK_CUDA_CHECK(cudaMalloc(&data, bytes));
    return data;
  }
  void device_free(void* data) noexcept override { cudaFree(data); }
  void copy_to_device(void* device, const void* host, std::size_t bytes,
                      CUstream_st* stream) override {
    BOOK_CUDA_CHECK(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, stream));
  }
  void copy_to_host(void* host, const void* device, std::size_t bytes,
                    CUstream_st* stream) override {
    BOOK_CUDA_CHECK(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, stream));
  }
  void device_reduce(Buffer dst, ConstBuffer src, ReduceOp op, CUstream_st* stream) override {
    BOOK_CHECK(dst.count == src.count && dst.dtype == src.dtype,
               "device_reduce: destination has " << dst.count << " " << dtype_name(dst.dtype)
                                                 << " elements but source has " << src.count << " "
                                                 << dtype_name(src.dtype));
    const bool take_max = op == ReduceOp::kMax;
    switch (dst.dtype) {
      case DType::kF32:
        return launch_reduce<float>(dst.data, src.data, dst.count, take_max, stream);
      case DType::kF64:
        return launch_reduce<double>(dst.data, src.data, dst.count, take_max, stream);
      case DType::kBF16:
        return launch_reduce<__nv_bfloat16>(dst.data, src.data, dst.count, take_max, stream);
      case DType::kF16:
        return launch_reduce<__half>(dst.data, src.data, dst.count, take_max, stream);
    }
  }

  int get_unique_id(NcclId* id) override {
    ncclUniqueId nccl_id{};
    const ncclResult_t result = ncclGetUniqueId(&nccl_id);
    std::memcpy(id->bytes, &nccl_id, sizeof nccl_id);
    return result;
  }
  int comm_init_rank(ncclComm** comm, int size, const NcclId& id, int rank) override {
    ncclUniqueId nccl_id;
    std::memcpy(&nccl_id, id.bytes, sizeof nccl_id);
    return ncclCommInitRank(comm, size, nccl_id, rank);
  }
  int comm_split(ncclComm* comm, int color, int key, ncclComm** child) override {
    return ncclCommSplit(comm, color < 0 ? NCCL_SPLIT_NOCOLOR : color, key, child, nullptr);
  }
  int comm_user_rank(ncclComm* comm, int* rank) override { return ncclCommUserRank(comm, rank); }
  int comm_count(ncclComm* comm, int* count) override { return ncclCommCount(comm, count); }
  int comm_get_async_error(ncclComm* comm, int* async) override {
    ncclResult_t pending = ncclSuccess;
    const ncclResult_t result = ncclCommGetAsyncError(comm, &pending);
    *async = pending;
    return result;
  }
  int comm_abort(ncclComm* comm) override { return ncclCommAbort(comm); }
  int comm_destroy(ncclComm* comm) override { return ncclCommDestroy(comm); }
  int group_start() override { return ncclGroupStart(); }
  int group_end() override { return ncclGroupEnd(); }
  int all_reduce(const void* send, void* recv, std::size_t count, DType dtype, ReduceOp op,
                 ncclComm* comm, CUstream_st* stream) override {
    return ncclAllReduce(send, recv, count, nccl_type(dtype), nccl_op(op), comm, stream);
  }
  int reduce_scatter(const void* send, void* recv, std::size_t recv_count, DType dtype, ReduceOp op,
                     ncclComm* comm, CUstream_st* stream) override {
    return ncclReduceScatter(send, recv, recv_count, nccl_type(dtype), nccl_op(op), comm, stream);
  }
  int all_gather(const void* send, void* recv, std::size_t send_count, DType dtype, ncclComm* comm,
                 CUstream_st* stream) override {
    return ncclAllGather(send, recv, send_count, nccl_type(dtype), comm, stream);
  }
  int broadcast(const void* send, void* recv, std::size_t count, DType dtype, int root,
                ncclComm* comm, CUstream_st* stream) override {
    return ncclBroadcast(send, recv, count, nccl_type(dtype), root, comm, stream);
  }
  int reduce(const void* send, void* recv, std::size_t count, DType dtype, ReduceOp op, int root,
             ncclComm* comm, CUstream_st* stream) override {
    return ncclReduce(send, recv, count, nccl_type(dtype), nccl_op(op), root, comm, stream);
  }
  int send(const void* data, std::size_t bytes, int peer, ncclComm* comm,
           CUstream_st* stream) override {
    return ncclSend(data, bytes, ncclUint8, peer, comm, stream);
  }
  int recv(void* data, std::size_t bytes, int peer, ncclComm* comm, CUstream_st* stream) override {
    return ncclRecv(data, bytes, ncclUint8, peer, comm, stream);
  }
  std::string error_string(int result) override {
    return ncclGetErrorString(static_cast<ncclResult_t>(result));
  }
  std::string last_error(ncclComm* comm) override {
    const char* last = ncclGetLastError(comm);
    return last ? last : "";
  }
};

}  // namespace

NcclApi& real_nccl_api() {
  static RealNcclApi api;
  return api;
}

NcclId nccl_unique_id() {
  NcclId id{};
  const int result = real_nccl_api().get_unique_id(&id);
  BOOK_CHECK(result == nccl_result::kSuccess,
             "ncclGetUniqueId failed: " << real_nccl_api().error_string(result));
  return id;
}

NcclCommunicator::NcclCommunicator(int rank, int size, const NcclId& id, int device,
                                   std::string group)
    : NcclCommunicator(real_nccl_api(), rank, size, id, device, std::move(group)) {}

}  // namespace book::coll
