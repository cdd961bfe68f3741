// The NCCL backend's life and errors: construction, the bounded wait on the stream, ncclCommAbort
// after an error, destruction, device scratch; the collectives are nccl_collectives.cc. Every
// NCCL and CUDA call goes through NcclApi (nccl_api.h), so this file needs neither header and its
// tests need no GPU; nccl_api.cu holds the calls themselves.
#include <chrono>
#include <sstream>
#include <thread>

#include "chapters/03_collectives/nccl.h"
#include "common/check.h"

namespace book::coll {

namespace {

bool failed(int result) {
  return result != nccl_result::kSuccess && result != nccl_result::kInProgress;
}

}  // namespace

int nccl_device_for(int local_rank, int local_ranks, int devices) {
  BOOK_CHECK(devices > 0,
             "local rank " << local_rank << " sees no GPU: NCCL needs one GPU per rank");
  BOOK_CHECK(local_ranks <= devices,
             local_ranks << " ranks run on this host but it has " << devices << " GPU"
                         << (devices == 1 ? "" : "s")
                         << ": NCCL needs one GPU per rank (two ranks on one GPU fail in "
                            "ncclCommInitRank). Start at most "
                         << devices << " ranks per host (mpirun -np " << devices
                         << " on one host, or --map-by ppr:" << devices << ":node)");
  BOOK_CHECK(local_rank >= 0 && local_rank < local_ranks,
             "local rank " << local_rank << " is not in 0.." << local_ranks - 1);
  return local_rank;
}

// ---- device scratch

NcclCommunicator::DeviceScratch::~DeviceScratch() {
  if (data_) api_.device_free(data_);
}

void* NcclCommunicator::DeviceScratch::reserve(std::size_t bytes) {
  if (bytes <= bytes_ && data_) return data_;
  if (data_) api_.device_free(data_);
  data_ = nullptr;
  bytes_ = 0;
  data_ = api_.device_alloc(bytes > 0 ? bytes : 1);
  bytes_ = bytes;
  return data_;
}

// ---- life

NcclCommunicator::NcclCommunicator(NcclApi& api, int rank, int size, const NcclId& id, int device,
                                   std::string group)
    : Communicator(rank, size, std::move(group)), api_(api), device_(device) {
  api_.set_device(device);
  stream_ = api_.create_stream();
  const int result = api_.comm_init_rank(&comm_, size, id, rank);
  if (failed(result)) {
    api_.destroy_stream(stream_);  // the destructor does not run for a constructor that throws
    stream_ = nullptr;
    comm_ = nullptr;
    check(result, "ncclCommInitRank");
  }
}

NcclCommunicator::NcclCommunicator(NcclApi& api, ncclComm* comm, int device, std::string group)
    : Communicator(
          [&] {
            int r = 0;
            api.comm_user_rank(comm, &r);
            return r;
          }(),
          [&] {
            int n = 0;
            api.comm_count(comm, &n);
            return n;
          }(),
          std::move(group)),
      api_(api),
      comm_(comm),
      device_(device) {
  api_.set_device(device);
  stream_ = api_.create_stream();
}

NcclCommunicator::~NcclCommunicator() {
  if (comm_) {
    int async = nccl_result::kSuccess;
    api_.comm_get_async_error(comm_, &async);
    if (failed(async))
      api_.comm_abort(comm_);  // destroying a communicator in error can block
    else
      api_.comm_destroy(comm_);
  }
  if (stream_) api_.destroy_stream(stream_);
}

// ---- checks and waiting

void NcclCommunicator::check(int result, const char* call) {
  if (!failed(result)) return;
  const std::string last = comm_ ? api_.last_error(comm_) : std::string();
  BOOK_CHECK(false, where() << ": " << call << " failed: " << api_.error_string(result)
                            << (last.empty() ? "" : " (" + last + ")"));
}

void NcclCommunicator::require_live() const {
  BOOK_CHECK(comm_ != nullptr,
             where() << ": this NCCL communicator was aborted after an earlier error ("
                     << abort_reason_
                     << "); NCCL cannot use it again: create a new one, on every rank");
}

void NcclCommunicator::abort_and_throw(const std::string& why) {
  const std::string message = where() + ": " + why +
                              " (communicator aborted with ncclCommAbort; create a new one to go "
                              "on)";
  api_.comm_abort(comm_);  // the only way to get the GPU back from a collective that waits
  comm_ = nullptr;
  abort_reason_ = why;
  throw Error(message);
}

void NcclCommunicator::synchronize() {
  const auto deadline = std::chrono::steady_clock::now() + timeout();
  for (;;) {
    std::string cuda_error;
    const StreamState state = api_.query_stream(stream_, &cuda_error);
    if (state == StreamState::kDone) return;
    if (state == StreamState::kFailed) abort_and_throw("the stream failed: " + cuda_error);
    int async = nccl_result::kSuccess;
    api_.comm_get_async_error(comm_, &async);
    if (failed(async)) {
      const std::string last = api_.last_error(comm_);
      abort_and_throw("an asynchronous NCCL error: " + api_.error_string(async) +
                      (last.empty() ? "" : " (" + last + ")"));
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      std::ostringstream why;
      why << "timed out after " << timeout().count() << " ms; a peer rank never joined";
      abort_and_throw(why.str());
    }
    std::this_thread::yield();
  }
}

}  // namespace book::coll
