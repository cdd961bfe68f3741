/// @file
/// The NCCL backend: one rank per GPU, on one machine or many. NCCL runs its own algorithms (ring
/// and tree, chosen per size, with the reduction fused into the receive), so every collective here
/// is `Algorithm::kNative` and buffers are device memory. The point-to-point calls (ncclSend /
/// ncclRecv) are counted like every other backend's; NCCL's own collectives are not.
///
/// **Non-blocking collectives on GPUs: what would be needed** (not done; this backend is only
/// compiled here). AsyncCommunicator (async.h) over this backend gets, from split(), a new
/// ncclComm with its own stream, so its kernels would not queue behind the caller's; but its
/// thread would first have to call cudaSetDevice for the communicator's GPU (the current device
/// is per host thread, and this backend sets it only in its constructor). NCCL itself needs no
/// thread for overlap, because every NCCL call is already asynchronous to the host: the GPU
/// version is a second communicator (ncclCommSplit) with its own stream, a CUDA event recorded
/// after each collective as the handle, and cudaStreamWaitEvent (not a host wait) where the
/// compute stream needs the result. This backend instead synchronises after every call, to turn a
/// missing peer into a timeout.
#pragma once

#include <memory>

#include "chapters/03_collectives/communicator.h"
#include "chapters/03_collectives/mpi.h"

// NCCL's and CUDA's handle types, declared here so that this header compiles without <nccl.h>
// (which pulls in CUDA's fp16/bf16 headers); nccl.cu is compiled by nvcc.
struct ncclComm;
struct CUstream_st;

namespace book::coll {

/// NCCL's unique id (ncclUniqueId, NCCL_UNIQUE_ID_BYTES = 128 bytes): made by one rank, given to
/// all, it names the group they form.
struct NcclId {
  char bytes[128];  ///< Opaque to everyone but NCCL.
};

/// A fresh id from ncclGetUniqueId (it opens a listening socket on this host).
NcclId nccl_unique_id();

/// One GPU's end of an NCCL communicator.
class NcclCommunicator final : public Communicator {
 public:
  /// Joins the NCCL group identified by `id` as `rank` of `size`, on CUDA device `device`. Every
  /// rank must pass the same id (see nccl_over_mpi()).
  NcclCommunicator(int rank, int size, const NcclId& id, int device, std::string group = "nccl");
  ~NcclCommunicator() override;

  /// ncclAllReduce on device memory; `algorithm` must be kAutomatic or kNative.
  void all_reduce(Buffer data, ReduceOp op = ReduceOp::kSum,
                  Algorithm algorithm = Algorithm::kAutomatic) override;
  /// ncclReduceScatter; NCCL needs equal shards, so input.count must be a multiple of size().
  void reduce_scatter(ConstBuffer input, Buffer output, ReduceOp op = ReduceOp::kSum,
                      Algorithm algorithm = Algorithm::kAutomatic) override;
  /// ncclAllGather; output.count must be a multiple of size().
  void all_gather(ConstBuffer input, Buffer output,
                  Algorithm algorithm = Algorithm::kAutomatic) override;
  /// ncclBroadcast.
  void broadcast(Buffer data, int root) override;
  /// ncclReduce.
  void reduce(ConstBuffer input, Buffer output, int root, ReduceOp op = ReduceOp::kSum) override;
  /// ncclSend/ncclRecv to every peer inside one ncclGroupStart/End.
  void all_to_all(ConstBuffer input, std::span<const std::size_t> send_counts, Buffer output,
                  std::span<const std::size_t> recv_counts) override;
  /// A one-element ncclAllReduce, then a stream synchronisation.
  void barrier() override;
  /// ncclCommSplit.
  std::unique_ptr<Communicator> split(int color, int key) override;
  /// The CUDA stream every call is issued on (calls return after it has drained).
  CUstream_st* stream() const { return stream_; }

 protected:
  /// ncclSend, then wait for the stream (up to the timeout).
  void transport_send(const void* data, std::size_t bytes, int dst, int tag) override;
  /// ncclRecv, then wait. NCCL has no tags and no message sizes: both sides must agree.
  void transport_recv(void* data, std::size_t bytes, int src, int tag) override;
  /// ncclSend and ncclRecv in one group, then wait.
  void transport_sendrecv(const void* out, std::size_t out_bytes, int dst, void* in,
                          std::size_t in_bytes, int src, int tag) override;

 private:
  NcclCommunicator(ncclComm* comm, int device, std::string group);
  void check(int nccl_result, const char* call);
  void synchronize();
  ncclComm* comm_ = nullptr;
  CUstream_st* stream_ = nullptr;
  int device_ = 0;
  int splits_ = 0;
};

/// The usual launch: rank 0 of `mpi` creates the unique id, MPI_Bcast gives it to every process,
/// and each process takes GPU (node-local rank mod the GPUs it sees).
std::unique_ptr<NcclCommunicator> nccl_over_mpi(MpiCommunicator& mpi);

}  // namespace book::coll
