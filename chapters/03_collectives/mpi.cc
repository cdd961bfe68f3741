// The MPI backend: a byte mover under the book's algorithms, and MPI's collectives as the peer.
#include "chapters/03_collectives/mpi.h"

#include <chrono>
#include <climits>
#include <cstddef>
#include <exception>
#include <memory>
#include <sstream>
#include <thread>
#include <vector>

#include "common/check.h"

namespace book::coll {

namespace {

int rank_of(MPI_Comm comm) {
  int r = 0;
  MPI_Comm_rank(comm, &r);
  return r;
}

int size_of(MPI_Comm comm) {
  int n = 0;
  MPI_Comm_size(comm, &n);
  return n;
}

std::string mpi_error(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return std::string(text, length);
}

int as_int(std::size_t bytes, const std::string& where) {
  BOOK_CHECK(bytes <= static_cast<std::size_t>(INT_MAX),
             where << ": " << bytes << " bytes is more than one MPI message of int count holds");
  return static_cast<int>(bytes);
}

// The MPI type of a buffer MPI can reduce: FP32 or FP64 (MPI has no BF16/FP16 reduction).
MPI_Datatype reducible_type(DType dtype, const std::string& where) {
  BOOK_CHECK(dtype == DType::kF32 || dtype == DType::kF64,
             where << ": MPI has no " << dtype_name(dtype)
                   << " reduction; use f32 or f64, or the book's algorithms");
  return dtype == DType::kF32 ? MPI_FLOAT : MPI_DOUBLE;
}

const char* thread_level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE:
      return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED:
      return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED:
      return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_MULTIPLE:
      return "MPI_THREAD_MULTIPLE";
  }
  return "an unknown thread level";
}

}  // namespace

MpiSession::MpiSession(int* argc, char*** argv, MpiThreads threads) {
  int provided = 0;  // what the library gives; require_concurrent_use() checks it when it matters
  MPI_Init_thread(argc, argv,
                  threads == MpiThreads::kMultiple ? MPI_THREAD_MULTIPLE : MPI_THREAD_FUNNELED,
                  &provided);
}

// A rank leaving with an error (a book::Error unwinding through main) does not finalize:
// MPI_Finalize waits for every rank, and the rank this one timed out on may never come (it died,
// or its link is down), so the error would never be printed. Exiting without it makes mpirun end
// the job, saying which rank left first.
MpiSession::~MpiSession() {
  if (std::uncaught_exceptions() > 0) return;
  MPI_Finalize();
}

MpiCommunicator::MpiCommunicator(MPI_Comm comm, std::string group)
    : Communicator(rank_of(comm), size_of(comm), std::move(group)) {
  MPI_Comm_dup(comm, &comm_);
  MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
}

struct MpiCommunicator::PendingSend {
  std::vector<std::byte> bytes;  // the copy MPI sends from
  MPI_Request request = MPI_REQUEST_NULL;
  int dst = 0;
  std::chrono::steady_clock::time_point posted;
};

MpiCommunicator::~MpiCommunicator() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  // Sends not yet taken get the timeout to finish (their receivers may still be working), then
  // are cancelled: a destructor cannot throw, and a receiver that never came fails on its side.
  // (None while an error unwinds: the error is what this rank reports, at once.)
  const auto deadline = std::chrono::steady_clock::now() +
                        (std::uncaught_exceptions() > 0 ? std::chrono::milliseconds(0) : timeout());
  for (auto& send : pending_) {
    int done = 0;
    while (!done && std::chrono::steady_clock::now() < deadline) {
      MPI_Test(&send->request, &done, MPI_STATUS_IGNORE);
      if (!done) std::this_thread::yield();
    }
    if (!done) {
      MPI_Cancel(&send->request);
      MPI_Request_free(&send->request);
    }
  }
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

void MpiCommunicator::reap_sends() {
  const auto now = std::chrono::steady_clock::now();
  for (auto it = pending_.begin(); it != pending_.end();) {
    int done = 0;
    MPI_Test(&(*it)->request, &done, MPI_STATUS_IGNORE);
    if (done) {
      it = pending_.erase(it);
      continue;
    }
    BOOK_CHECK(now - (*it)->posted < timeout(),
               where() << ": timed out after " << timeout().count() << " ms: rank " << (*it)->dst
                       << " has not taken a message sent to it");
    ++it;
  }
}

void MpiCommunicator::wait(MPI_Request* requests, int n, int peer, std::size_t expected_bytes) {
  // (None while an error unwinds: the error is what this rank reports, at once.)
  const auto deadline = std::chrono::steady_clock::now() +
                        (std::uncaught_exceptions() > 0 ? std::chrono::milliseconds(0) : timeout());
  for (;;) {
    int done = 0;
    MPI_Status statuses[2];
    const int code = MPI_Testall(n, requests, &done, statuses);
    BOOK_CHECK(code == MPI_SUCCESS, where() << ": MPI failed talking to rank " << peer << ": "
                                            << mpi_error(code)
                                            << " (a size mismatch: do all ranks pass the same "
                                               "counts?)");
    if (done) {
      int got = 0;  // the receive is always the first request
      MPI_Get_count(&statuses[0], MPI_BYTE, &got);
      BOOK_CHECK(expected_bytes == SIZE_MAX || static_cast<std::size_t>(got) == expected_bytes,
                 where() << ": expected " << expected_bytes << " bytes from rank " << peer
                         << " but the message has " << got << ": do all ranks pass the same "
                         << "counts?");
      return;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      for (int i = 0; i < n; ++i) {
        if (requests[i] == MPI_REQUEST_NULL) continue;
        MPI_Cancel(&requests[i]);
        MPI_Request_free(&requests[i]);
      }
      BOOK_CHECK(false, where() << ": timed out after " << timeout().count()
                                << " ms waiting for rank " << peer);
    }
    std::this_thread::yield();
  }
}

void MpiCommunicator::transport_send(const void* data, std::size_t bytes, int dst, int tag) {
  reap_sends();
  auto send = std::make_unique<PendingSend>();
  const auto* first = static_cast<const std::byte*>(data);
  send->bytes.assign(first, first + bytes);
  send->dst = dst;
  send->posted = std::chrono::steady_clock::now();
  MPI_Isend(send->bytes.data(), as_int(bytes, where()), MPI_BYTE, dst, tag, comm_,
            &send->request);
  pending_.push_back(std::move(send));
}

void MpiCommunicator::transport_recv(void* data, std::size_t bytes, int src, int tag) {
  MPI_Request request;
  MPI_Irecv(data, as_int(bytes, where()), MPI_BYTE, src, tag, comm_, &request);
  wait(&request, 1, src, bytes);
}

void MpiCommunicator::transport_sendrecv(const void* out, std::size_t out_bytes, int dst, void* in,
                                         std::size_t in_bytes, int src, int tag) {
  MPI_Request requests[2];
  MPI_Irecv(in, as_int(in_bytes, where()), MPI_BYTE, src, tag, comm_, &requests[0]);
  MPI_Isend(out, as_int(out_bytes, where()), MPI_BYTE, dst, tag, comm_, &requests[1]);
  wait(requests, 2, src, in_bytes);
}

void MpiCommunicator::all_reduce(Buffer data, ReduceOp op, Algorithm algorithm) {
  check_reduce_op(op, "MpiCommunicator::all_reduce");
  if (algorithm != Algorithm::kNative) return Communicator::all_reduce(data, op, algorithm);
  Scope scope(*this, "all_reduce(native MPI_Allreduce)");
  check_fingerprint(Collective::kAllReduce, data.count, data.dtype, op);
  const MPI_Datatype type = reducible_type(data.dtype, where());
  const int code = MPI_Allreduce(MPI_IN_PLACE, data.data, as_int(data.count, where()), type,
                                 op == ReduceOp::kMax ? MPI_MAX : MPI_SUM, comm_);
  BOOK_CHECK(code == MPI_SUCCESS, where() << ": " << mpi_error(code));
  if (op == ReduceOp::kAvg) scale(data, 1.0 / size());
}

void MpiCommunicator::reduce_scatter(ConstBuffer input, Buffer output, ReduceOp op,
                                     Algorithm algorithm) {
  check_reduce_op(op, "MpiCommunicator::reduce_scatter");
  if (algorithm != Algorithm::kNative)
    return Communicator::reduce_scatter(input, output, op, algorithm);
  Scope scope(*this, "reduce_scatter(native MPI_Reduce_scatter)");
  check_fingerprint(Collective::kReduceScatter, input.count, input.dtype, op);
  const MPI_Datatype type = reducible_type(input.dtype, where());
  BOOK_CHECK(output.dtype == input.dtype, where() << ": the output is " << dtype_name(output.dtype)
                                                  << " but the input " << dtype_name(input.dtype));
  std::vector<int> counts(size());
  for (int r = 0; r < size(); ++r)
    counts[r] = as_int(shard_of(input.count, size(), r).count, where());
  BOOK_CHECK(output.count == static_cast<std::size_t>(counts[rank()]),
             where() << ": output must hold this rank's shard of " << counts[rank()]
                     << " elements, got " << output.count);
  const int code = MPI_Reduce_scatter(input.data, output.data, counts.data(), type,
                                      op == ReduceOp::kMax ? MPI_MAX : MPI_SUM, comm_);
  BOOK_CHECK(code == MPI_SUCCESS, where() << ": " << mpi_error(code));
  if (op == ReduceOp::kAvg) scale(output, 1.0 / size());
}

void MpiCommunicator::all_gather(ConstBuffer input, Buffer output, Algorithm algorithm) {
  if (algorithm != Algorithm::kNative) return Communicator::all_gather(input, output, algorithm);
  Scope scope(*this, "all_gather(native MPI_Allgatherv)");
  check_fingerprint(Collective::kAllGather, output.count, output.dtype);
  const std::size_t width = dtype_size(output.dtype);
  std::vector<int> counts(size()), offsets(size());
  for (int r = 0; r < size(); ++r) {
    const Shard s = shard_of(output.count, size(), r);
    counts[r] = as_int(s.count * width, where());
    offsets[r] = as_int(s.offset * width, where());
  }
  BOOK_CHECK(
      input.bytes() == static_cast<std::size_t>(counts[rank()]) && input.dtype == output.dtype,
      where() << ": input must be this rank's shard of " << counts[rank()] / width
              << " elements, got " << input.count);
  const int code = MPI_Allgatherv(input.data, counts[rank()], MPI_BYTE, output.data, counts.data(),
                                  offsets.data(), MPI_BYTE, comm_);
  BOOK_CHECK(code == MPI_SUCCESS, where() << ": " << mpi_error(code));
}

void MpiCommunicator::require_concurrent_use(std::string_view who) const {
  int level = MPI_THREAD_SINGLE;
  MPI_Query_thread(&level);
  BOOK_CHECK(level == MPI_THREAD_MULTIPLE,
             who << ": MPI runs with " << thread_level_name(level)
                 << ", but a second thread calling MPI needs MPI_THREAD_MULTIPLE; start MPI with "
                    "MpiSession(&argc, &argv) (it asks for MPI_THREAD_MULTIPLE) or "
                    "MPI_Init_thread(..., MPI_THREAD_MULTIPLE, ...), with an MPI library built "
                    "with thread support");
}

std::unique_ptr<Communicator> MpiCommunicator::split(int color, int key) {
  Scope scope(*this, "split");
  MPI_Comm child = MPI_COMM_NULL;
  const int code = MPI_Comm_split(comm_, color < 0 ? MPI_UNDEFINED : color, key, &child);
  BOOK_CHECK(code == MPI_SUCCESS, where() << ": " << mpi_error(code));
  const std::string name =
      group() + "/split" + std::to_string(splits_++) + ":" + std::to_string(color);
  if (child == MPI_COMM_NULL) return nullptr;
  auto result = std::make_unique<MpiCommunicator>(child, name);
  MPI_Comm_free(&child);  // the new communicator holds its own duplicate
  pass_settings_to(*result);
  return result;
}

}  // namespace book::coll
