// The NCCL backend: thin wrappers, each followed by a bounded wait on the stream, so a rank that
// never arrives turns into an error (after ncclCommAbort) instead of a hang.
#include "chapters/03_collectives/nccl.h"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "common/check.h"
#include "common/cuda.h"

namespace book::coll {

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

void require_native(Algorithm algorithm, const std::string& where) {
  BOOK_CHECK(algorithm == Algorithm::kAutomatic || algorithm == Algorithm::kNative,
             where << ": NCCL runs its own algorithms; pass Algorithm::kNative or kAutomatic, not "
                   << algorithm_name(algorithm));
}

static_assert(sizeof(NcclId) == sizeof(ncclUniqueId), "NcclId must hold an ncclUniqueId");

}  // namespace

NcclId nccl_unique_id() {
  ncclUniqueId id{};
  const ncclResult_t result = ncclGetUniqueId(&id);
  BOOK_CHECK(result == ncclSuccess, "ncclGetUniqueId failed: " << ncclGetErrorString(result));
  NcclId out{};
  std::memcpy(out.bytes, &id, sizeof id);
  return out;
}

NcclCommunicator::NcclCommunicator(int rank, int size, const NcclId& id, int device,
                                   std::string group)
    : Communicator(rank, size, std::move(group)), device_(device) {
  BOOK_CUDA_CHECK(cudaSetDevice(device));
  BOOK_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  ncclUniqueId nccl_id;
  std::memcpy(&nccl_id, id.bytes, sizeof nccl_id);
  check(ncclCommInitRank(&comm_, size, nccl_id, rank), "ncclCommInitRank");
}

NcclCommunicator::NcclCommunicator(ncclComm* comm, int device, std::string group)
    : Communicator(
          [&] {
            int r = 0;
            ncclCommUserRank(comm, &r);
            return r;
          }(),
          [&] {
            int n = 0;
            ncclCommCount(comm, &n);
            return n;
          }(),
          std::move(group)),
      comm_(comm),
      device_(device) {
  BOOK_CUDA_CHECK(cudaSetDevice(device));
  BOOK_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
}

NcclCommunicator::~NcclCommunicator() {
  if (comm_) ncclCommDestroy(comm_);
  if (stream_) cudaStreamDestroy(stream_);
}

void NcclCommunicator::check(int nccl_result, const char* call) {
  const auto result = static_cast<ncclResult_t>(nccl_result);
  BOOK_CHECK(result == ncclSuccess || result == ncclInProgress,
             where() << ": " << call << " failed: " << ncclGetErrorString(result) << " ("
                     << ncclGetLastError(comm_) << ")");
}

void NcclCommunicator::synchronize() {
  const auto deadline = std::chrono::steady_clock::now() + timeout();
  for (;;) {
    const cudaError_t status = cudaStreamQuery(stream_);
    if (status == cudaSuccess) return;
    BOOK_CHECK(status == cudaErrorNotReady,
               where() << ": the stream failed: " << cudaGetErrorString(status));
    ncclResult_t async = ncclSuccess;
    ncclCommGetAsyncError(comm_, &async);
    check(async, "an asynchronous NCCL operation");
    if (std::chrono::steady_clock::now() >= deadline) {
      ncclCommAbort(comm_);  // the only way to get the GPU back from a collective that waits
      comm_ = nullptr;
      BOOK_CHECK(false, where() << ": timed out after " << timeout().count()
                                << " ms; a peer rank never joined (communicator aborted)");
    }
    std::this_thread::yield();
  }
}

void NcclCommunicator::all_reduce(Buffer data, ReduceOp op, Algorithm algorithm) {
  Scope scope(*this, "all_reduce(ncclAllReduce)");
  require_native(algorithm, where());
  check(ncclAllReduce(data.data, data.data, data.count, nccl_type(data.dtype), nccl_op(op), comm_,
                      stream_),
        "ncclAllReduce");
  synchronize();
}

void NcclCommunicator::reduce_scatter(ConstBuffer input, Buffer output, ReduceOp op,
                                      Algorithm algorithm) {
  Scope scope(*this, "reduce_scatter(ncclReduceScatter)");
  require_native(algorithm, where());
  BOOK_CHECK(input.count % size() == 0 && output.count == input.count / size() &&
                 input.dtype == output.dtype,
             where() << ": NCCL needs equal shards: input " << input.count << " elements, a "
                     << "multiple of " << size() << ", and output input/" << size());
  check(ncclReduceScatter(input.data, output.data, output.count, nccl_type(input.dtype),
                          nccl_op(op), comm_, stream_),
        "ncclReduceScatter");
  synchronize();
}

void NcclCommunicator::all_gather(ConstBuffer input, Buffer output, Algorithm algorithm) {
  Scope scope(*this, "all_gather(ncclAllGather)");
  require_native(algorithm, where());
  BOOK_CHECK(output.count % size() == 0 && input.count == output.count / size() &&
                 input.dtype == output.dtype,
             where() << ": NCCL needs equal shards: output " << output.count << " elements, a "
                     << "multiple of " << size() << ", and input output/" << size());
  check(ncclAllGather(input.data, output.data, input.count, nccl_type(input.dtype), comm_, stream_),
        "ncclAllGather");
  synchronize();
}

void NcclCommunicator::broadcast(Buffer data, int root) {
  Scope scope(*this, "broadcast(ncclBroadcast)");
  BOOK_CHECK(root >= 0 && root < size(), where() << ": root " << root << " is not a rank");
  check(
      ncclBroadcast(data.data, data.data, data.count, nccl_type(data.dtype), root, comm_, stream_),
      "ncclBroadcast");
  synchronize();
}

void NcclCommunicator::reduce(ConstBuffer input, Buffer output, int root, ReduceOp op) {
  Scope scope(*this, "reduce(ncclReduce)");
  BOOK_CHECK(root >= 0 && root < size(), where() << ": root " << root << " is not a rank");
  check(ncclReduce(input.data, output.data, input.count, nccl_type(input.dtype), nccl_op(op), root,
                   comm_, stream_),
        "ncclReduce");
  synchronize();
}

void NcclCommunicator::all_to_all(ConstBuffer input, std::span<const std::size_t> send_counts,
                                  Buffer output, std::span<const std::size_t> recv_counts) {
  Scope scope(*this, "all_to_all(ncclSend/ncclRecv)");
  const auto n = static_cast<std::size_t>(size());
  BOOK_CHECK(send_counts.size() == n && recv_counts.size() == n,
             where() << ": send_counts and recv_counts need one entry per rank (" << n << ")");
  std::size_t send_at = 0, recv_at = 0;
  check(ncclGroupStart(), "ncclGroupStart");
  for (std::size_t j = 0; j < n; ++j) {
    check(ncclSend(input.slice(send_at, send_counts[j]).data, send_counts[j],
                   nccl_type(input.dtype), static_cast<int>(j), comm_, stream_),
          "ncclSend");
    check(ncclRecv(output.slice(recv_at, recv_counts[j]).data, recv_counts[j],
                   nccl_type(output.dtype), static_cast<int>(j), comm_, stream_),
          "ncclRecv");
    send_at += send_counts[j];
    recv_at += recv_counts[j];
  }
  check(ncclGroupEnd(), "ncclGroupEnd");
  BOOK_CHECK(send_at == input.count && recv_at == output.count,
             where() << ": the counts do not add up to the buffers' sizes");
  synchronize();
}

void NcclCommunicator::barrier() {
  Scope scope(*this, "barrier(ncclAllReduce of one float)");
  float* one = nullptr;
  BOOK_CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&one), sizeof(float), stream_));
  check(ncclAllReduce(one, one, 1, ncclFloat32, ncclSum, comm_, stream_), "ncclAllReduce");
  BOOK_CUDA_CHECK(cudaFreeAsync(one, stream_));
  synchronize();
}

std::unique_ptr<Communicator> NcclCommunicator::split(int color, int key) {
  Scope scope(*this, "split(ncclCommSplit)");
  ncclComm_t child = nullptr;
  check(ncclCommSplit(comm_, color < 0 ? NCCL_SPLIT_NOCOLOR : color, key, &child, nullptr),
        "ncclCommSplit");
  const std::string name =
      group() + "/split" + std::to_string(splits_++) + ":" + std::to_string(color);
  if (!child) return nullptr;
  auto result = std::unique_ptr<NcclCommunicator>(new NcclCommunicator(child, device_, name));
  pass_settings_to(*result);
  return result;
}

void NcclCommunicator::transport_send(const void* data, std::size_t bytes, int dst, int) {
  check(ncclSend(data, bytes, ncclUint8, dst, comm_, stream_), "ncclSend");
  synchronize();
}

void NcclCommunicator::transport_recv(void* data, std::size_t bytes, int src, int) {
  check(ncclRecv(data, bytes, ncclUint8, src, comm_, stream_), "ncclRecv");
  synchronize();
}

void NcclCommunicator::transport_sendrecv(const void* out, std::size_t out_bytes, int dst, void* in,
                                          std::size_t in_bytes, int src, int) {
  check(ncclGroupStart(), "ncclGroupStart");
  check(ncclSend(out, out_bytes, ncclUint8, dst, comm_, stream_), "ncclSend");
  check(ncclRecv(in, in_bytes, ncclUint8, src, comm_, stream_), "ncclRecv");
  check(ncclGroupEnd(), "ncclGroupEnd");
  synchronize();
}

std::unique_ptr<NcclCommunicator> nccl_over_mpi(MpiCommunicator& mpi) {
  NcclId id{};
  if (mpi.rank() == 0) id = nccl_unique_id();
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, mpi.mpi_comm());
  // The node-local rank: split the MPI group by shared-memory node.
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(mpi.mpi_comm(), MPI_COMM_TYPE_SHARED, mpi.rank(), MPI_INFO_NULL, &node);
  int local_rank = 0;
  MPI_Comm_rank(node, &local_rank);
  MPI_Comm_free(&node);
  const int devices = cuda::device_count();
  BOOK_CHECK(devices > 0, "rank " << mpi.rank() << " sees no GPU: " << cuda::no_device_reason());
  return std::make_unique<NcclCommunicator>(mpi.rank(), mpi.size(), id, local_rank % devices,
                                            "nccl");
}

}  // namespace book::coll
