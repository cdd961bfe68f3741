/// @file
/// The NCCL backend: one rank per GPU, on one machine or many. NCCL runs its own algorithms (ring
/// and tree, chosen per size, with the reduction fused into the receive), so every collective here
/// is `Algorithm::kNative` and buffers are device memory. The point-to-point calls (ncclSend /
/// ncclRecv) are counted like every other backend's; NCCL's own collectives are not.
///
/// **Device memory, and what stays host-only.** Every Communicator call works on device buffers
/// here: the collectives, send/recv/sendrecv, sendrecv_reduce (ncclSend/ncclRecv into a device
/// buffer, then a reduce kernel), reduce_local (the same kernel) and temporary() (device memory).
/// Host-only, and never to be given device pointers: the free functions of types.h (reduce_into,
/// scale, copy_into) and so the teaching algorithms of algorithms.h that call them (ring_*,
/// tree_*, naive_*, all_to_all with kAvg or copies) — on NCCL, call the collectives, which run
/// NCCL's own.
///
/// **Errors.** Arguments are checked before anything is enqueued (all_to_all's counts before
/// ncclGroupStart); a call that fails inside ncclGroupStart … ncclGroupEnd still ends the group,
/// so the error is this call's and the next call does not pile into an open group. Every call
/// waits for its stream up to timeout(); an asynchronous NCCL error, a failed stream or the
/// timeout aborts the communicator (ncclCommAbort: ncclCommDestroy could block on an operation
/// that never finishes) and throws; later calls on it say it was aborted. The destructor aborts
/// too when NCCL reports an asynchronous error. All of this goes through NcclApi (nccl_api.h),
/// so tests check it without a GPU.
///
/// **Non-blocking collectives on GPUs: what would be needed** (not done). AsyncCommunicator
/// (async.h) over this backend gets, from split(), a new ncclComm with its own stream, so its
/// kernels would not queue behind the caller's; but its thread would first have to call
/// cudaSetDevice for the communicator's GPU (the current device is per host thread, and this
/// backend sets it only in its constructor). NCCL itself needs no thread for overlap, because
/// every NCCL call is already asynchronous to the host: the GPU version is a second communicator
/// (ncclCommSplit) with its own stream, a CUDA event recorded after each collective as the handle,
/// and cudaStreamWaitEvent (not a host wait) where the compute stream needs the result. This
/// backend instead synchronises after every call, to turn a missing peer into a timeout.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "chapters/03_collectives/communicator.h"
#include "chapters/03_collectives/nccl_api.h"

namespace book::coll {

/// A fresh id from ncclGetUniqueId (it opens a listening socket on this host).
NcclId nccl_unique_id();

/// The GPU a process takes: its node-local rank, when the node has a GPU for every local rank.
/// @throws book::Error when `devices` is 0, or when `local_ranks` > `devices`: two ranks on one GPU
///   would fail later in ncclCommInitRank with an obscure "invalid usage"; the message says how
///   many ranks to start per host instead.
int nccl_device_for(int local_rank, int local_ranks, int devices);

/// One GPU's end of an NCCL communicator.
class NcclCommunicator final : public Communicator {
 public:
  /// Joins the NCCL group identified by `id` as `rank` of `size`, on CUDA device `device`. Every
  /// rank must pass the same id (see nccl_over_mpi() in nccl_mpi.h).
  NcclCommunicator(int rank, int size, const NcclId& id, int device, std::string group = "nccl");
  /// The same through `api` (which must outlive the communicator and everything split from it):
  /// what tests use to run the backend's logic over a fake NCCL.
  NcclCommunicator(NcclApi& api, int rank, int size, const NcclId& id, int device,
                   std::string group = "nccl");
  /// ncclCommDestroy, or ncclCommAbort when NCCL reports an asynchronous error.
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
  /// ncclReduce; the root's output must have the input's count and type.
  void reduce(ConstBuffer input, Buffer output, int root, ReduceOp op = ReduceOp::kSum) override;
  /// ncclSend/ncclRecv to every peer inside one ncclGroupStart/End, after the counts are checked.
  void all_to_all(ConstBuffer input, std::span<const std::size_t> send_counts, Buffer output,
                  std::span<const std::size_t> recv_counts) override;
  /// A one-element ncclAllReduce, then a stream synchronisation.
  void barrier() override;
  /// ncclCommSplit.
  std::unique_ptr<Communicator> split(int color, int key) override;
  /// The CUDA stream every call is issued on (calls return after it has drained).
  CUstream_st* stream() const { return stream_; }
  /// Whether an error aborted the communicator (every call then refuses).
  bool aborted() const { return comm_ == nullptr; }

 protected:
  /// ncclSend, then wait for the stream (up to the timeout).
  void transport_send(const void* data, std::size_t bytes, int dst, int tag) override;
  /// ncclRecv, then wait. NCCL has no tags and no message sizes: both sides must agree.
  void transport_recv(void* data, std::size_t bytes, int src, int tag) override;
  /// ncclSend and ncclRecv in one group, then wait.
  void transport_sendrecv(const void* out, std::size_t out_bytes, int dst, void* in,
                          std::size_t in_bytes, int src, int tag) override;
  /// ncclSend and ncclRecv (into device scratch) in one group, then the reduce kernel.
  void transport_sendrecv_reduce(const void* out, std::size_t out_bytes, int dst, Buffer inout,
                                 int src, int tag, ReduceOp op) override;
  /// The reduce kernel on the stream, then wait.
  void local_reduce(Buffer dst, ConstBuffer src, ReduceOp op) override;
  /// Device memory (reused between calls).
  void* temporary_memory(std::size_t bytes) override;
  /// The fingerprints through device memory: this rank's copied into its slot, one in-place
  /// ncclAllGather, all of them copied back, then wait.
  void exchange_fingerprints(const void* mine, std::size_t bytes, void* all) override;

 private:
  class Group;
  /// Device memory that grows on demand and frees itself.
  class DeviceScratch {
   public:
    explicit DeviceScratch(NcclApi& api) : api_(api) {}
    ~DeviceScratch();
    DeviceScratch(const DeviceScratch&) = delete;
    DeviceScratch& operator=(const DeviceScratch&) = delete;
    /// At least `bytes` bytes (the old contents are not kept).
    void* reserve(std::size_t bytes);

   private:
    NcclApi& api_;
    void* data_ = nullptr;
    std::size_t bytes_ = 0;
  };

  NcclCommunicator(NcclApi& api, ncclComm* comm, int device, std::string group);
  void check(int nccl_result, const char* call);
  void require_live() const;
  void synchronize();
  [[noreturn]] void abort_and_throw(const std::string& why);

  NcclApi& api_;
  ncclComm* comm_ = nullptr;
  CUstream_st* stream_ = nullptr;
  int device_ = 0;
  int splits_ = 0;
  std::string abort_reason_;
  DeviceScratch incoming_{api_};      // sendrecv_reduce's landing buffer
  DeviceScratch temporary_{api_};     // temporary()
  DeviceScratch barrier_{api_};       // barrier()'s one float
  DeviceScratch fingerprints_{api_};  // the fingerprint check's all-gather
};

}  // namespace book::coll
