// Non-blocking collectives: a queue of closures run in order by one communication thread on its own
// communicator; each closure's outcome lands in the operation its handle waits on.
#include "chapters/03_collectives/async.h"

#include <exception>
#include <sstream>

#include "common/check.h"

namespace book::coll {

namespace detail {

struct AsyncOperation {
  std::string name;                         // "non-blocking all_reduce #3 (1037 x f32)"
  std::function<void(Communicator&)> body;  // the blocking collective it runs
  mutable std::mutex mutex;
  std::condition_variable finished_signal;
  bool finished = false;
  std::string error;                   // empty when it succeeded
  std::exception_ptr not_implemented;  // a stub's NotImplemented, passed through unchanged
};

}  // namespace detail

using detail::AsyncOperation;

CollectiveHandle::CollectiveHandle(std::shared_ptr<AsyncOperation> operation)
    : operation_(std::move(operation)) {}

void CollectiveHandle::wait() const {
  BOOK_CHECK(operation_,
             "wait() on an empty CollectiveHandle: keep the handle that "
             "AsyncCommunicator's all_reduce/reduce_scatter/... returned");
  std::unique_lock lock(operation_->mutex);
  operation_->finished_signal.wait(lock, [&] { return operation_->finished; });
  if (operation_->not_implemented) std::rethrow_exception(operation_->not_implemented);
  if (!operation_->error.empty()) throw Error(operation_->error);
}

bool CollectiveHandle::done() const {
  if (!operation_) return false;
  std::lock_guard lock(operation_->mutex);
  return operation_->finished;
}

const std::string& CollectiveHandle::name() const {
  static const std::string empty = "(empty handle)";
  return operation_ ? operation_->name : empty;
}

//! [async_constructor]
AsyncCommunicator::AsyncCommunicator(Communicator& comm)
    : uncaught_at_start_(std::uncaught_exceptions()) {
  comm.require_concurrent_use("AsyncCommunicator on group '" + comm.group() + "'");
  // A communicator of its own, made by every rank together, so that the thread's messages can
  // never be taken for the caller's (a Communicator serves one thread at a time).
  comm_ = comm.split(0, comm.rank());
  comm_->set_group_name(comm.group() + "/async");
  comm_->set_trace(comm.trace(), "comm", comm.trace_track());
  thread_ = std::thread([this] { run(); });
}
//! [async_constructor]

AsyncCommunicator::~AsyncCommunicator() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    // Unwinding from an exception on this rank: do not start more communication.
    cancel_queued_ = std::uncaught_exceptions() > uncaught_at_start_;
  }
  work_.notify_all();
  thread_.join();
}

void AsyncCommunicator::run() {
  for (;;) {
    std::shared_ptr<AsyncOperation> operation;
    std::string broken;
    bool cancel = false;
    {
      std::unique_lock lock(mutex_);
      work_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and everything started has finished
      operation = std::move(queue_.front());
      queue_.pop_front();
      broken = broken_;
      cancel = cancel_queued_;
    }
    std::string error;
    std::exception_ptr not_implemented;
    if (cancel) {
      error = operation->name +
              " was cancelled: its AsyncCommunicator was destroyed by an exception before it ran";
    } else if (!broken.empty()) {
      error = operation->name + " did not run: an earlier one failed (" + broken + ")";
    } else {
      try {
        operation->body(*comm_);
      } catch (const NotImplemented& e) {
        not_implemented = std::current_exception();
        error = operation->name + " failed: " + e.what();
      } catch (const std::exception& e) {
        error = operation->name + " failed: " + e.what();
      } catch (...) {
        error = operation->name + " failed with an exception that is not a std::exception";
      }
    }
    if (!error.empty()) {
      std::lock_guard lock(mutex_);
      if (broken_.empty()) broken_ = error;
    }
    {
      std::lock_guard lock(operation->mutex);
      operation->error = std::move(error);
      operation->not_implemented = not_implemented;
      operation->finished = true;
      operation->body = nullptr;  // release what the closure holds
    }
    operation->finished_signal.notify_all();
  }
}

CollectiveHandle AsyncCommunicator::start(const char* collective, ConstBuffer data,
                                          std::function<void(Communicator&)> body) {
  std::ostringstream detail;  // "(1037 x f32)"
  detail << "(" << data.count << " x " << dtype_name(data.dtype) << ")";
  return enqueue(collective, detail.str(), std::move(body));
}

CollectiveHandle AsyncCommunicator::submit(const std::string& what,
                                           std::function<void(Communicator&)> body) {
  BOOK_CHECK(body, "AsyncCommunicator::submit('" << what
                                                 << "'): the body is empty; pass the calls to run");
  return enqueue(what, "", std::move(body));
}

CollectiveHandle AsyncCommunicator::enqueue(const std::string& what, const std::string& detail,
                                            std::function<void(Communicator&)> body) {
  auto operation = std::make_shared<AsyncOperation>();
  operation->body = std::move(body);
  {
    std::lock_guard lock(mutex_);
    std::ostringstream name;  // "non-blocking all_reduce #3 (1037 x f32)"
    name << "non-blocking " << what << " #" << ++started_ << (detail.empty() ? "" : " ") << detail;
    operation->name = name.str();
    queue_.push_back(operation);
    std::erase_if(unwaited_, [](const auto& op) {
      std::lock_guard op_lock(op->mutex);
      return op->finished && op->error.empty();  // failures stay, for wait_all to report
    });
    unwaited_.push_back(operation);
  }
  work_.notify_one();
  return CollectiveHandle(std::move(operation));
}

void AsyncCommunicator::wait_all() {
  std::vector<std::shared_ptr<AsyncOperation>> pending;
  {
    std::lock_guard lock(mutex_);
    pending.swap(unwaited_);
  }
  std::exception_ptr first;
  for (const auto& operation : pending) {
    try {
      CollectiveHandle(operation).wait();
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  }
  if (first) std::rethrow_exception(first);
}

//! [async_all_reduce]
CollectiveHandle AsyncCommunicator::all_reduce(Buffer data, ReduceOp op, Algorithm algorithm) {
  return start("all_reduce", data,
               [=](Communicator& comm) { comm.all_reduce(data, op, algorithm); });
}
//! [async_all_reduce]

CollectiveHandle AsyncCommunicator::reduce_scatter(ConstBuffer input, Buffer output, ReduceOp op,
                                                   Algorithm algorithm) {
  return start("reduce_scatter", input,
               [=](Communicator& comm) { comm.reduce_scatter(input, output, op, algorithm); });
}

CollectiveHandle AsyncCommunicator::all_gather(ConstBuffer input, Buffer output,
                                               Algorithm algorithm) {
  return start("all_gather", output,
               [=](Communicator& comm) { comm.all_gather(input, output, algorithm); });
}

CollectiveHandle AsyncCommunicator::broadcast(Buffer data, int root) {
  return start("broadcast", data, [=](Communicator& comm) { comm.broadcast(data, root); });
}

}  // namespace book::coll
