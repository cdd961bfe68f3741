// The backend-independent half of the Communicator: argument checks, counters, the trace, and the
// given (non-exercise) algorithms: tree and naive all-reduce, tree reduce and broadcast.
#include <sstream>

#include "chapters/03_collectives/algorithms.h"
#include "chapters/03_collectives/communicator.h"
#include "common/check.h"
#include "common/trace.h"

namespace book::coll {

Communicator::Communicator(int rank, int size, std::string group)
    : rank_(rank), size_(size), group_(std::move(group)), operation_("idle") {
  BOOK_CHECK(size >= 1 && rank >= 0 && rank < size,
             "rank " << rank << " of " << size << " ranks does not exist");
}

void Communicator::set_timeout(std::chrono::milliseconds timeout) {
  BOOK_CHECK(timeout.count() > 0, "the timeout must be positive, got " << timeout.count() << " ms");
  timeout_ = timeout;
}

void Communicator::set_trace(Trace* trace, std::string lane, int track) {
  trace_ = trace;
  trace_lane_ = std::move(lane);
  trace_track_ = track;
}

void Communicator::pass_settings_to(Communicator& child) const {
  child.set_timeout(timeout_);
  child.set_tree_threshold_bytes(tree_threshold_bytes_);
  child.set_trace(trace_, trace_lane_, trace_track());
  child.set_fingerprint_check(fingerprint_check_);
}

void Communicator::record(std::string name, const char* category, double start_us,
                          double bytes) const {
  if (!trace_) return;
  trace_->add({std::move(name), category, trace_track(), start_us, trace_->now_us() - start_us,
               bytes, trace_lane_});
}

std::string Communicator::where() const {
  std::ostringstream out;
  out << operation_ << " in group '" << group_ << "' (" << size_ << " ranks) on rank " << rank_;
  return out.str();
}

void* Communicator::scratch(std::size_t bytes) {
  if (scratch_.size() < bytes) scratch_.resize(bytes);
  return scratch_.data();
}

Buffer Communicator::temporary(std::size_t count, DType dtype) {
  const CallGuard guard(*this, "temporary");
  return {temporary_memory(count * dtype_size(dtype)), count, dtype};
}

void* Communicator::temporary_memory(std::size_t bytes) {
  if (temporary_.size() < bytes) temporary_.resize(bytes);
  return temporary_.data();
}

void Communicator::check_peer(int peer, const char* what) const {
  BOOK_CHECK(peer >= 0 && peer < size_, where() << ": " << what << " rank " << peer
                                                << " is not in the group (0.." << size_ - 1 << ")");
}

Communicator::CallGuard::CallGuard(Communicator& comm, std::string_view call) : comm_(comm) {
  const std::thread::id me = std::this_thread::get_id();
  if (comm.owner_.load(std::memory_order_relaxed) == me) return;  // nested in this thread's call
  std::thread::id nobody{};
  outermost_ = comm.owner_.compare_exchange_strong(nobody, me, std::memory_order_acquire);
  BOOK_CHECK(outermost_, call << " on rank " << comm.rank_ << " of group '" << comm.group_ << "' ("
                              << comm.size_
                              << " ranks): another thread is inside a call on this communicator. "
                                 "A Communicator is used by one thread at a time; give the other "
                                 "thread its own communicator from split() (AsyncCommunicator "
                                 "does this for non-blocking collectives)");
}

Communicator::CallGuard::~CallGuard() {
  if (outermost_) comm_.owner_.store(std::thread::id{}, std::memory_order_release);
}

Communicator::Scope::Scope(Communicator& comm, std::string name)
    : guard_(comm, name),
      comm_(comm),
      previous_(std::move(comm.operation_)),
      start_us_(comm.trace_ ? comm.trace_->now_us() : 0) {
  comm_.operation_ = std::move(name);
}

Communicator::Scope::~Scope() {
  if (comm_.trace_ && previous_ == "idle")
    comm_.record(comm_.operation_, "collective", start_us_, 0);
  comm_.operation_ = std::move(previous_);
}

void Communicator::send(ConstBuffer data, int dst, int tag) {
  const CallGuard guard(*this, "send");
  check_peer(dst, "send to");
  BOOK_CHECK(tag >= 0, where() << ": tags must be ≥ 0, got " << tag);
  const double start = trace_ ? trace_->now_us() : 0;
  transport_send(data.data, data.bytes(), dst, tag);
  counters_.bytes_sent += data.bytes();
  counters_.messages_sent += 1;
  if (trace_)
    record("send →" + std::to_string(dst), "send", start, static_cast<double>(data.bytes()));
}

void Communicator::recv(Buffer data, int src, int tag) {
  const CallGuard guard(*this, "recv");
  check_peer(src, "receive from");
  BOOK_CHECK(tag >= 0, where() << ": tags must be ≥ 0, got " << tag);
  const double start = trace_ ? trace_->now_us() : 0;
  transport_recv(data.data, data.bytes(), src, tag);
  counters_.bytes_received += data.bytes();
  counters_.messages_received += 1;
  if (trace_)
    record("recv ←" + std::to_string(src), "recv", start, static_cast<double>(data.bytes()));
}

void Communicator::sendrecv(ConstBuffer out, int dst, Buffer in, int src, int tag) {
  const CallGuard guard(*this, "sendrecv");
  check_peer(dst, "send to");
  check_peer(src, "receive from");
  BOOK_CHECK(tag >= 0, where() << ": tags must be ≥ 0, got " << tag);
  const double start = trace_ ? trace_->now_us() : 0;
  transport_sendrecv(out.data, out.bytes(), dst, in.data, in.bytes(), src, tag);
  counters_.bytes_sent += out.bytes();
  counters_.messages_sent += 1;
  counters_.bytes_received += in.bytes();
  counters_.messages_received += 1;
  if (trace_)
    record("sendrecv →" + std::to_string(dst) + " ←" + std::to_string(src), "sendrecv", start,
           static_cast<double>(out.bytes()));
}

void Communicator::sendrecv_reduce(ConstBuffer out, int dst, Buffer inout, int src, int tag,
                                   ReduceOp op) {
  check_reduce_op(op, "Communicator::sendrecv_reduce");
  const CallGuard guard(*this, "sendrecv_reduce");
  check_peer(dst, "send to");
  check_peer(src, "receive from");
  BOOK_CHECK(tag >= 0, where() << ": tags must be ≥ 0, got " << tag);
  BOOK_CHECK(op != ReduceOp::kAvg,
             where() << ": sendrecv_reduce adds or takes the max; divide by the size afterwards");
  const double start = trace_ ? trace_->now_us() : 0;
  transport_sendrecv_reduce(out.data, out.bytes(), dst, inout, src, tag, op);
  counters_.bytes_sent += out.bytes();
  counters_.messages_sent += 1;
  counters_.bytes_received += inout.bytes();
  counters_.messages_received += 1;
  if (trace_)
    record("sendrecv+reduce →" + std::to_string(dst) + " ←" + std::to_string(src),
           "sendrecv_reduce", start, static_cast<double>(out.bytes()));
}

void Communicator::transport_sendrecv_reduce(const void* out, std::size_t out_bytes, int dst,
                                             Buffer inout, int src, int tag, ReduceOp op) {
  if (incoming_.size() < inout.bytes()) incoming_.resize(inout.bytes());
  transport_sendrecv(out, out_bytes, dst, incoming_.data(), inout.bytes(), src, tag);
  reduce_into(inout, ConstBuffer(incoming_.data(), inout.count, inout.dtype), op);
}

void Communicator::reduce_local(Buffer dst, ConstBuffer src, ReduceOp op) {
  check_reduce_op(op, "Communicator::reduce_local");
  const CallGuard guard(*this, "reduce_local");
  const double start = trace_ ? trace_->now_us() : 0;
  local_reduce(dst, src, op);
  if (trace_) record(std::string("reduce ") + op_name(op), "reduce", start, 0);
}

void Communicator::local_reduce(Buffer dst, ConstBuffer src, ReduceOp op) {
  reduce_into(dst, src, op);
}

// ---- the given algorithms ----

//! [tree_reduce]
void tree_reduce(Communicator& comm, Buffer data, int root, ReduceOp op) {
  const int n = comm.size();
  const int me = (comm.rank() - root + n) % n;  // position in a tree rooted at 0
  const ReduceOp step_op = op == ReduceOp::kAvg ? ReduceOp::kSum : op;
  const Buffer incoming = comm.temporary(data.count, data.dtype);
  // Level k: ranks with bit k set send their partial result to the rank 2^k below and stop.
  for (int mask = 1; mask < n; mask <<= 1) {
    if (me & mask) {
      comm.send(data, (me - mask + root) % n, kTagTree);
      return;
    }
    if (me + mask < n) {
      comm.recv(incoming, (me + mask + root) % n, kTagTree);
      comm.reduce_local(data, incoming, step_op);
    }
  }
  if (op == ReduceOp::kAvg) scale(data, 1.0 / n);
}
//! [tree_reduce]

void tree_broadcast(Communicator& comm, Buffer data, int root) {
  const int n = comm.size();
  const int me = (comm.rank() - root + n) % n;
  int mask = 1;
  while (mask < n) {  // receive once, from the rank that differs in my lowest set bit
    if (me & mask) {
      comm.recv(data, (me - mask + root) % n, kTagTree);
      break;
    }
    mask <<= 1;
  }
  for (mask >>= 1; mask > 0; mask >>= 1)  // then forward to the subtrees below that bit
    if (me + mask < n) comm.send(data, (me + mask + root) % n, kTagTree);
}

void tree_all_reduce(Communicator& comm, Buffer data, ReduceOp op) {
  tree_reduce(comm, data, 0, op);
  tree_broadcast(comm, data, 0);
}

void naive_all_reduce(Communicator& comm, Buffer data, ReduceOp op) {
  const int n = comm.size();
  if (comm.rank() != 0) {
    comm.send(data, 0, kTagNaive);
    comm.recv(data, 0, kTagNaive);
    return;
  }
  const Buffer incoming = comm.temporary(data.count, data.dtype);
  const ReduceOp step_op = op == ReduceOp::kAvg ? ReduceOp::kSum : op;
  for (int src = 1; src < n; ++src) {
    comm.recv(incoming, src, kTagNaive);
    comm.reduce_local(data, incoming, step_op);
  }
  if (op == ReduceOp::kAvg) scale(data, 1.0 / n);
  for (int dst = 1; dst < n; ++dst) comm.send(data, dst, kTagNaive);
}

}  // namespace book::coll
