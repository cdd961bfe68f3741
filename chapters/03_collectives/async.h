/// @file
/// Non-blocking collectives: start an all-reduce, keep computing, wait for it later. This is what
/// lets data parallelism hide gradient traffic behind the rest of backward (chapter 5) and ZeRO-3
/// prefetch the next layer's parameters (chapter 6).
///
/// The pattern: a communication thread that owns its own communicator. AsyncCommunicator splits
/// one off the caller's communicator (every rank together), so the thread's messages never mix
/// with the caller's, and the rule "one thread per communicator" (communicator.h) holds. Each
/// start call queues the collective and returns a CollectiveHandle at once; the thread runs the
/// queue in the order the collectives were started (every rank must start them in the same order,
/// as with blocking calls). Buffers belong to the collective until its wait() returns: do not
/// touch them, or free them, before.
///
/// Errors never hang and never vanish: a collective that fails (a rank that failed, a timeout, a
/// size mismatch) makes its wait() throw a book::Error that names it, and every collective queued
/// after it fails too, without running (the peers' state is unknown). Destroying the
/// AsyncCommunicator finishes what was started (each collective bounded by the timeout), or, while
/// an exception is propagating, fails what had not started yet; it never throws.
///
/// Backends: threads (what the tests run); MPI with MPI_THREAD_MULTIPLE (MpiSession asks for it;
/// the constructor refuses otherwise, saying so). NCCL: compiled, not run; see nccl.h for what a
/// GPU version needs.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "chapters/03_collectives/communicator.h"

namespace book::coll {

namespace detail {
struct AsyncOperation;  // one queued collective and its outcome; async.cc
}

/// One started collective. Cheap to copy (copies refer to the same collective); outlives the
/// AsyncCommunicator that started it.
class CollectiveHandle {
 public:
  /// An empty handle; wait() on it is an error.
  CollectiveHandle() = default;
  /// Blocks until the collective has finished. Returns if it succeeded; otherwise throws a
  /// book::Error naming it ("non-blocking all_reduce #3 (1037 x f32) failed: ...") — every time it
  /// is called (a stub's book::NotImplemented comes through unchanged).
  void wait() const;
  /// Whether it has finished (succeeded or failed); never blocks.
  bool done() const;
  /// Its name, e.g. "non-blocking all_reduce #3 (1037 x f32)".
  const std::string& name() const;

 private:
  friend class AsyncCommunicator;
  explicit CollectiveHandle(std::shared_ptr<detail::AsyncOperation> operation);
  std::shared_ptr<detail::AsyncOperation> operation_;
};

/// Collectives that return at once and run on a communication thread with its own communicator.
/// Start and wait from one thread (the owner); the communication thread is the only user of the
/// inner communicator.
class AsyncCommunicator {
 public:
  /// Splits a communicator for the thread off `comm` (every rank of `comm` calls this together;
  /// `comm` stays the caller's) and starts the thread. The inner communicator inherits `comm`'s
  /// timeout and trace; its boxes go to the lane "comm" of `comm`'s track.
  /// @throws book::Error if the backend cannot run a second thread (MPI below THREAD_MULTIPLE).
  explicit AsyncCommunicator(Communicator& comm);
  /// Finishes or fails every started collective (see the file comment), then stops the thread.
  ~AsyncCommunicator();
  AsyncCommunicator(const AsyncCommunicator&) = delete;             ///< Owns a thread.
  AsyncCommunicator& operator=(const AsyncCommunicator&) = delete;  ///< Owns a thread.

  /// Communicator::all_reduce, started now, finished by the thread.
  CollectiveHandle all_reduce(Buffer data, ReduceOp op = ReduceOp::kSum,
                              Algorithm algorithm = Algorithm::kAutomatic);
  /// Communicator::reduce_scatter, started now.
  CollectiveHandle reduce_scatter(ConstBuffer input, Buffer output, ReduceOp op = ReduceOp::kSum,
                                  Algorithm algorithm = Algorithm::kAutomatic);
  /// Communicator::all_gather, started now.
  CollectiveHandle all_gather(ConstBuffer input, Buffer output,
                              Algorithm algorithm = Algorithm::kAutomatic);
  /// Communicator::broadcast, started now.
  CollectiveHandle broadcast(Buffer data, int root);
  /// Any blocking calls on the thread's communicator, started now and run in start order like
  /// the collectives above: a composition (a collective timed on the thread, a delay injected
  /// before one, several calls that must stay together). `body` runs on the communication thread
  /// with the inner communicator, so it must call the same collectives on every rank and touch
  /// only what the caller leaves alone until wait(). The handle is named "non-blocking <what>
  /// #k"; an exception from `body` fails it like a failed collective (and what follows it).
  /// @throws book::Error if `body` is empty.
  CollectiveHandle submit(const std::string& what, std::function<void(Communicator&)> body);

  /// Waits for every collective started so far; throws the first failure among them.
  void wait_all();

  /// The thread's communicator: its group, size and rank; its counters() once wait_all() has
  /// returned (the thread writes them while it runs). Read-only: its calls belong to the thread.
  const Communicator& communicator() const { return *comm_; }

 private:
  // Queues `body`, named after `collective` and the buffer `data` it moves.
  CollectiveHandle start(const char* collective, ConstBuffer data,
                         std::function<void(Communicator&)> body);
  // Queues `body` under the name "non-blocking <what> #k <detail>".
  CollectiveHandle enqueue(const std::string& what, const std::string& detail,
                           std::function<void(Communicator&)> body);
  void run();  // the communication thread

  std::unique_ptr<Communicator> comm_;
  int uncaught_at_start_;  // std::uncaught_exceptions() when constructed
  std::mutex mutex_;
  std::condition_variable work_;
  std::deque<std::shared_ptr<detail::AsyncOperation>> queue_;
  std::vector<std::shared_ptr<detail::AsyncOperation>> unwaited_;  // for wait_all()
  std::uint64_t started_ = 0;
  bool stopping_ = false;
  bool cancel_queued_ = false;
  std::string broken_;  // the first failure; later collectives are not run
  std::thread thread_;  // last: started once everything above exists
};

}  // namespace book::coll
