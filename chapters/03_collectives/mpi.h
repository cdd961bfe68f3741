/// @file
/// The MPI backend: ranks are processes started by `mpirun`, on one machine or many. The teaching
/// algorithms run over MPI point-to-point; `Algorithm::kNative` calls MPI's own collectives
/// (MPI_Allreduce, MPI_Reduce_scatter, MPI_Allgatherv), the peer the benchmark compares with.
#pragma once

#include <mpi.h>

#include <memory>
#include <string_view>
#include <vector>

#include "chapters/03_collectives/communicator.h"

namespace book::coll {

/// The thread support MpiSession asks MPI for.
enum class MpiThreads {
  kFunneled,  ///< Only the main thread calls MPI: the least locking inside MPI.
  kMultiple,  ///< Any thread may call MPI at any time: what AsyncCommunicator's thread needs.
};

/// Calls MPI_Init_thread at construction and MPI_Finalize at destruction; one per process, in
/// main. By default it asks for MPI_THREAD_MULTIPLE, so non-blocking collectives (async.h) can run
/// on their own thread; a library that offers less makes AsyncCommunicator refuse, saying why.
/// When it is destroyed by an exception leaving main's body, it skips MPI_Finalize (which waits
/// for every rank, and the one that failed may never come) and lets the process exit, so the error
/// is printed and mpirun ends the job.
class MpiSession {
 public:
  /// Initialises MPI with main's arguments, asking for `threads`.
  MpiSession(int* argc, char*** argv, MpiThreads threads = MpiThreads::kMultiple);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;             ///< One per process.
  MpiSession& operator=(const MpiSession&) = delete;  ///< One per process.
};

/// One process's end of an MPI communicator. It owns a duplicate of the communicator it was given
/// (so its messages never mix with anyone else's) and returns MPI errors instead of aborting.
class MpiCommunicator final : public Communicator {
 public:
  /// A communicator over a duplicate of `comm` (MPI_COMM_WORLD by default), named `group`.
  explicit MpiCommunicator(MPI_Comm comm = MPI_COMM_WORLD, std::string group = "world");
  ~MpiCommunicator() override;

  /// `Algorithm::kNative` calls MPI_Allreduce (FP32 and FP64 only); others run the book's
  /// algorithms.
  /// Native calls are not counted: MPI does not say what it sends.
  void all_reduce(Buffer data, ReduceOp op = ReduceOp::kSum,
                  Algorithm algorithm = Algorithm::kAutomatic) override;
  /// `Algorithm::kNative` calls MPI_Reduce_scatter (FP32 and FP64 only).
  void reduce_scatter(ConstBuffer input, Buffer output, ReduceOp op = ReduceOp::kSum,
                      Algorithm algorithm = Algorithm::kAutomatic) override;
  /// `Algorithm::kNative` calls MPI_Allgatherv (any type, as bytes).
  void all_gather(ConstBuffer input, Buffer output,
                  Algorithm algorithm = Algorithm::kAutomatic) override;
  /// MPI_Comm_split, named "<group>/split<k>:<color>".
  std::unique_ptr<Communicator> split(int color, int key) override;
  /// The underlying (duplicated) MPI communicator, e.g. to broadcast an NCCL unique id.
  MPI_Comm mpi_comm() const { return comm_; }
  /// Refuses unless MPI runs with MPI_THREAD_MULTIPLE (MPI_Query_thread), naming the level it has.
  void require_concurrent_use(std::string_view who) const override;

 protected:
  /// Copies the bytes, MPI_Isends the copy and returns at once, as the threads backend's send
  /// does. Waiting for the send would deadlock two neighbours that both send before they receive
  /// (a pipeline's 1F1B does): above MPI's eager limit (4 KiB through shared memory, 64 KiB
  /// through TCP) a send completes only once its receiver is ready. The copy is freed once MPI
  /// has sent it; a send still not taken after timeout() makes this rank's next send throw,
  /// naming the receiver.
  void transport_send(const void* data, std::size_t bytes, int dst, int tag) override;
  /// MPI_Irecv, then MPI_Test until done or the timeout; checks the size.
  void transport_recv(void* data, std::size_t bytes, int src, int tag) override;
  /// Both requests at once, then MPI_Test on both.
  void transport_sendrecv(const void* out, std::size_t out_bytes, int dst, void* in,
                          std::size_t in_bytes, int src, int tag) override;

 private:
  struct PendingSend;  // a send that returned before its receiver took it
  void wait(MPI_Request* requests, int n, int peer, std::size_t expected_bytes);
  /// Frees the sends MPI has finished; throws if one has waited longer than timeout().
  void reap_sends();
  MPI_Comm comm_ = MPI_COMM_NULL;
  int splits_ = 0;
  std::vector<std::unique_ptr<PendingSend>> pending_;
};

}  // namespace book::coll
