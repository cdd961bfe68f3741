/// @file
/// The seam between the NCCL backend's logic and the libraries it drives. Every NCCL and CUDA call
/// NcclCommunicator makes goes through an NcclApi: the real one (real_nccl_api(), nccl_api.cu,
/// compiled by nvcc) calls NCCL and the CUDA runtime; a test hands the communicator a fake that
/// records the calls, fails the ones it is told to, and keeps "device" memory on the host. So the
/// backend's own logic — argument checks before a group starts, a group closed when a call inside
/// it throws, ncclCommAbort on an asynchronous error or a timeout, the device-side reduce — is
/// tested on a machine without a GPU (tests/03_collectives/nccl_logic_test.cc).
///
/// Plain C++: no NCCL or CUDA header. Handles are NCCL's and CUDA's opaque pointer types;
/// results are NCCL's `ncclResult_t` values as ints (nccl_result below).
#pragma once

#include <cstddef>
#include <string>

#include "chapters/03_collectives/types.h"

struct ncclComm;     // NCCL's communicator (ncclComm_t)
struct CUstream_st;  // a CUDA stream (cudaStream_t)

namespace book::coll {

/// NCCL's unique id (ncclUniqueId, NCCL_UNIQUE_ID_BYTES = 128 bytes): made by one rank, given to
/// all, it names the group they form.
struct NcclId {
  char bytes[128];  ///< Opaque to everyone but NCCL.
};

/// The `ncclResult_t` values the backend tells apart (nccl_api.cu checks them against nccl.h).
namespace nccl_result {
inline constexpr int kSuccess = 0;             ///< ncclSuccess
inline constexpr int kUnhandledCudaError = 1;  ///< ncclUnhandledCudaError
inline constexpr int kSystemError = 2;         ///< ncclSystemError
inline constexpr int kInternalError = 3;       ///< ncclInternalError
inline constexpr int kInvalidArgument = 4;     ///< ncclInvalidArgument
inline constexpr int kInvalidUsage = 5;        ///< ncclInvalidUsage
inline constexpr int kRemoteError = 6;         ///< ncclRemoteError
inline constexpr int kInProgress = 7;          ///< ncclInProgress (non-blocking communicators)
}  // namespace nccl_result

/// What a poll of a CUDA stream found.
enum class StreamState {
  kDone,    ///< Everything queued on it has finished.
  kBusy,    ///< Work is still running (cudaErrorNotReady).
  kFailed,  ///< A CUDA error: a kernel faulted, or the context is broken.
};

/// The NCCL and CUDA calls of the NCCL backend. NCCL calls return an `ncclResult_t` as an int
/// and never throw; the CUDA helpers throw book::Error when CUDA fails, except the ones marked
/// noexcept, which run in destructors.
class NcclApi {
 public:
  virtual ~NcclApi() = default;

  // ---- CUDA
  /// cudaSetDevice.
  virtual void set_device(int device) = 0;
  /// A new non-blocking stream on the current device.
  virtual CUstream_st* create_stream() = 0;
  /// cudaStreamDestroy.
  virtual void destroy_stream(CUstream_st* stream) noexcept = 0;
  /// cudaStreamQuery; on kFailed, `error` gets CUDA's description.
  virtual StreamState query_stream(CUstream_st* stream, std::string* error) = 0;
  /// cudaMalloc of `bytes` (> 0) bytes of device memory.
  virtual void* device_alloc(std::size_t bytes) = 0;
  /// cudaFree.
  virtual void device_free(void* data) noexcept = 0;
  /// Queues dst[i] = op(dst[i], src[i]) on `stream` — device memory, computed in FP32 (FP64 for
  /// FP64) and rounded once to the buffer's type, as reduce_into() does on the host; kAvg adds.
  virtual void device_reduce(Buffer dst, ConstBuffer src, ReduceOp op, CUstream_st* stream) = 0;

  /// cudaMemcpyAsync of `bytes` bytes from host memory to device memory, queued on `stream`.
  virtual void copy_to_device(void* device, const void* host, std::size_t bytes,
                              CUstream_st* stream) = 0;
  /// cudaMemcpyAsync of `bytes` bytes from device memory to host memory, queued on `stream`: the
  /// host bytes are there once the stream is done.
  virtual void copy_to_host(void* host, const void* device, std::size_t bytes,
                            CUstream_st* stream) = 0;

  // ---- NCCL (results: nccl_result)
  /// ncclGetUniqueId.
  virtual int get_unique_id(NcclId* id) = 0;
  /// ncclCommInitRank.
  virtual int comm_init_rank(ncclComm** comm, int size, const NcclId& id, int rank) = 0;
  /// ncclCommSplit; a negative color is NCCL_SPLIT_NOCOLOR (the child is then null).
  virtual int comm_split(ncclComm* comm, int color, int key, ncclComm** child) = 0;
  /// ncclCommUserRank.
  virtual int comm_user_rank(ncclComm* comm, int* rank) = 0;
  /// ncclCommCount.
  virtual int comm_count(ncclComm* comm, int* count) = 0;
  /// ncclCommGetAsyncError: `*async` gets the communicator's pending asynchronous result.
  virtual int comm_get_async_error(ncclComm* comm, int* async) = 0;
  /// ncclCommAbort: frees the communicator without waiting for its operations.
  virtual int comm_abort(ncclComm* comm) = 0;
  /// ncclCommDestroy: frees it after its operations (can block if one never finishes).
  virtual int comm_destroy(ncclComm* comm) = 0;
  /// ncclGroupStart.
  virtual int group_start() = 0;
  /// ncclGroupEnd.
  virtual int group_end() = 0;
  /// ncclAllReduce.
  virtual int all_reduce(const void* send, void* recv, std::size_t count, DType dtype, ReduceOp op,
                         ncclComm* comm, CUstream_st* stream) = 0;
  /// ncclReduceScatter (`recv_count` elements per rank).
  virtual int reduce_scatter(const void* send, void* recv, std::size_t recv_count, DType dtype,
                             ReduceOp op, ncclComm* comm, CUstream_st* stream) = 0;
  /// ncclAllGather (`send_count` elements per rank).
  virtual int all_gather(const void* send, void* recv, std::size_t send_count, DType dtype,
                         ncclComm* comm, CUstream_st* stream) = 0;
  /// ncclBroadcast.
  virtual int broadcast(const void* send, void* recv, std::size_t count, DType dtype, int root,
                        ncclComm* comm, CUstream_st* stream) = 0;
  /// ncclReduce.
  virtual int reduce(const void* send, void* recv, std::size_t count, DType dtype, ReduceOp op,
                     int root, ncclComm* comm, CUstream_st* stream) = 0;
  /// ncclSend of `bytes` bytes (as ncclUint8).
  virtual int send(const void* data, std::size_t bytes, int peer, ncclComm* comm,
                   CUstream_st* stream) = 0;
  /// ncclRecv of `bytes` bytes (as ncclUint8).
  virtual int recv(void* data, std::size_t bytes, int peer, ncclComm* comm,
                   CUstream_st* stream) = 0;
  /// ncclGetErrorString.
  virtual std::string error_string(int result) = 0;
  /// ncclGetLastError: NCCL's last message about `comm` (may be empty).
  virtual std::string last_error(ncclComm* comm) = 0;
};

/// The API that calls NCCL and CUDA: one object for the process (nccl_api.cu).
NcclApi& real_nccl_api();

}  // namespace book::coll
