/// @file
/// Data parallelism over NCCL with a model that lives on the CPU: a Communicator for host buffers
/// that stages every collective through GPU memory. Each call copies the host buffer to the GPU,
/// runs the device communicator's collective (NCCL's own algorithm), and copies the result back.
///
/// This is the book's NCCL path for chapter 5: the same DdpTrainer, buckets and overlap run with
/// NCCL moving the bytes, so the rank and GPU set-up, the unique-id exchange and every collective
/// are exercised on a GPU machine. It is not how a GPU trainer works: there the gradients are
/// already on the GPU, the copies disappear, and overlap comes from a second CUDA stream rather
/// than a thread (chapter 3's nccl.h says what that needs). It sets the communicator's GPU as the
/// current device at every call, because AsyncCommunicator calls from its own thread.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "chapters/03_collectives/communicator.h"

namespace book::ddp {

/// Host buffers in, host buffers out, the collective on `device_comm`'s GPU.
class DeviceStagedCommunicator final : public coll::Communicator {
 public:
  /// Wraps `device_comm` (e.g. an NcclCommunicator), whose buffers live on CUDA device `device`.
  /// Same rank, size and group name.
  DeviceStagedCommunicator(std::unique_ptr<coll::Communicator> device_comm, int device);
  ~DeviceStagedCommunicator() override;

  /// Copies `data` to the GPU, all-reduces it there (the device communicator's own algorithm,
  /// whatever `algorithm` asks), copies it back. Staged even for one rank, so the path runs.
  void all_reduce(coll::Buffer data, coll::ReduceOp op = coll::ReduceOp::kSum,
                  coll::Algorithm algorithm = coll::Algorithm::kAutomatic) override;
  /// Staged reduce-scatter (NCCL: input.count a multiple of size()).
  void reduce_scatter(coll::ConstBuffer input, coll::Buffer output,
                      coll::ReduceOp op = coll::ReduceOp::kSum,
                      coll::Algorithm algorithm = coll::Algorithm::kAutomatic) override;
  /// Staged all-gather (NCCL: output.count a multiple of size()).
  void all_gather(coll::ConstBuffer input, coll::Buffer output,
                  coll::Algorithm algorithm = coll::Algorithm::kAutomatic) override;
  /// Staged broadcast.
  void broadcast(coll::Buffer data, int root) override;
  /// The device communicator's barrier.
  void barrier() override;
  /// Splits the device communicator (ncclCommSplit) and stages the new group on the same GPU.
  std::unique_ptr<coll::Communicator> split(int color, int key) override;

 protected:
  /// Point-to-point calls are not staged: book::Error.
  void transport_send(const void* data, std::size_t bytes, int dst, int tag) override;
  /// Point-to-point calls are not staged: book::Error.
  void transport_recv(void* data, std::size_t bytes, int src, int tag) override;
  /// Point-to-point calls are not staged: book::Error.
  void transport_sendrecv(const void* out, std::size_t out_bytes, int dst, void* in,
                          std::size_t in_bytes, int src, int tag) override;

 private:
  void* device_scratch(std::size_t bytes, int which);  // 0: input, 1: output; grows, never shrinks
  std::unique_ptr<coll::Communicator> device_comm_;
  int device_;
  void* scratch_[2] = {nullptr, nullptr};
  std::size_t scratch_bytes_[2] = {0, 0};
};

}  // namespace book::ddp
