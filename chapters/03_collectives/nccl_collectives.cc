// The NCCL backend's collectives and point-to-point calls: check the arguments, enqueue the NCCL
// calls (in a group that ends itself where there are several), wait. Through NcclApi
// (nccl_api.h), like nccl_communicator.cc: no NCCL or CUDA header, tests need no GPU.
#include "chapters/03_collectives/nccl.h"
#include "common/check.h"

namespace book::coll {

namespace {

void require_native(Algorithm algorithm, const std::string& where) {
  BOOK_CHECK(algorithm == Algorithm::kAutomatic || algorithm == Algorithm::kNative,
             where << ": NCCL runs its own algorithms; pass Algorithm::kNative or kAutomatic, not "
                   << algorithm_name(algorithm));
}

void require_data(const void* data, std::size_t count, const std::string& where, const char* what) {
  BOOK_CHECK(data != nullptr || count == 0, where << ": the " << what << " buffer is null");
}

}  // namespace

// ---- a group that ends itself

// ncclGroupStart … ncclGroupEnd. end() ends it and checks the result; if a call inside throws
// first, the destructor ends it (ignoring that result: the error in flight is the one to
// report), so the next call does not land in a group that never ends.
class NcclCommunicator::Group {
 public:
  explicit Group(NcclCommunicator& comm) : comm_(comm) {
    comm_.check(comm_.api_.group_start(), "ncclGroupStart");
  }
  ~Group() {
    if (open_) comm_.api_.group_end();
  }
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;
  void end() {
    open_ = false;
    comm_.check(comm_.api_.group_end(), "ncclGroupEnd");
  }

 private:
  NcclCommunicator& comm_;
  bool open_ = true;
};

// ---- collectives

void NcclCommunicator::all_reduce(Buffer data, ReduceOp op, Algorithm algorithm) {
  Scope scope(*this, "all_reduce(ncclAllReduce)");
  check_reduce_op(op, "NcclCommunicator::all_reduce");
  require_native(algorithm, where());
  require_live();
  require_data(data.data, data.count, where(), "data");
  check_fingerprint(Collective::kAllReduce, data.count, data.dtype, op);
  check(api_.all_reduce(data.data, data.data, data.count, data.dtype, op, comm_, stream_),
        "ncclAllReduce");
  synchronize();
}

void NcclCommunicator::reduce_scatter(ConstBuffer input, Buffer output, ReduceOp op,
                                      Algorithm algorithm) {
  Scope scope(*this, "reduce_scatter(ncclReduceScatter)");
  check_reduce_op(op, "NcclCommunicator::reduce_scatter");
  require_native(algorithm, where());
  require_live();
  BOOK_CHECK(input.count % size() == 0 && output.count == input.count / size() &&
                 input.dtype == output.dtype,
             where() << ": NCCL needs equal shards: input " << input.count << " elements, a "
                     << "multiple of " << size() << ", and output input/" << size() << " of the "
                     << "same type; got output " << output.count << " "
                     << dtype_name(output.dtype));
  require_data(input.data, input.count, where(), "input");
  require_data(output.data, output.count, where(), "output");
  check_fingerprint(Collective::kReduceScatter, input.count, input.dtype, op);
  check(api_.reduce_scatter(input.data, output.data, output.count, input.dtype, op, comm_, stream_),
        "ncclReduceScatter");
  synchronize();
}

void NcclCommunicator::all_gather(ConstBuffer input, Buffer output, Algorithm algorithm) {
  Scope scope(*this, "all_gather(ncclAllGather)");
  require_native(algorithm, where());
  require_live();
  BOOK_CHECK(output.count % size() == 0 && input.count == output.count / size() &&
                 input.dtype == output.dtype,
             where() << ": NCCL needs equal shards: output " << output.count << " elements, a "
                     << "multiple of " << size() << ", and input output/" << size() << " of the "
                     << "same type; got input " << input.count << " " << dtype_name(input.dtype));
  require_data(input.data, input.count, where(), "input");
  require_data(output.data, output.count, where(), "output");
  check_fingerprint(Collective::kAllGather, output.count, output.dtype);
  check(api_.all_gather(input.data, output.data, input.count, input.dtype, comm_, stream_),
        "ncclAllGather");
  synchronize();
}

void NcclCommunicator::broadcast(Buffer data, int root) {
  Scope scope(*this, "broadcast(ncclBroadcast)");
  BOOK_CHECK(root >= 0 && root < size(),
             where() << ": root " << root << " is not a rank (0.." << size() - 1 << ")");
  require_live();
  require_data(data.data, data.count, where(), "data");
  check_fingerprint(Collective::kBroadcast, data.count, data.dtype, std::nullopt, root);
  check(api_.broadcast(data.data, data.data, data.count, data.dtype, root, comm_, stream_),
        "ncclBroadcast");
  synchronize();
}

void NcclCommunicator::reduce(ConstBuffer input, Buffer output, int root, ReduceOp op) {
  Scope scope(*this, "reduce(ncclReduce)");
  check_reduce_op(op, "NcclCommunicator::reduce");
  BOOK_CHECK(root >= 0 && root < size(),
             where() << ": root " << root << " is not a rank (0.." << size() - 1 << ")");
  require_live();
  if (rank() == root)
    BOOK_CHECK(output.count == input.count && output.dtype == input.dtype,
               where() << ": the root's output must have the input's " << input.count << " "
                       << dtype_name(input.dtype) << " elements, got " << output.count << " "
                       << dtype_name(output.dtype));
  require_data(input.data, input.count, where(), "input");
  check_fingerprint(Collective::kReduce, input.count, input.dtype, op, root);
  check(api_.reduce(input.data, output.data, input.count, input.dtype, op, root, comm_, stream_),
        "ncclReduce");
  synchronize();
}

void NcclCommunicator::all_to_all(ConstBuffer input, std::span<const std::size_t> send_counts,
                                  Buffer output, std::span<const std::size_t> recv_counts) {
  Scope scope(*this, "all_to_all(ncclSend/ncclRecv)");
  require_live();
  // Every count checked before the group: once enqueued, a bad count has already handed NCCL a
  // pointer past the end of a device buffer.
  check_all_to_all(input, send_counts, output, recv_counts);
  check_fingerprint(Collective::kAllToAll, 0, input.dtype);
  const std::size_t element = dtype_size(input.dtype);
  std::size_t send_at = 0, recv_at = 0;
  Group group(*this);
  for (std::size_t j = 0; j < send_counts.size(); ++j) {
    const int peer = static_cast<int>(j);
    check(api_.send(input.slice(send_at, send_counts[j]).data, send_counts[j] * element, peer,
                    comm_, stream_),
          "ncclSend");
    check(api_.recv(output.slice(recv_at, recv_counts[j]).data, recv_counts[j] * element, peer,
                    comm_, stream_),
          "ncclRecv");
    send_at += send_counts[j];
    recv_at += recv_counts[j];
  }
  group.end();
  synchronize();
}

void NcclCommunicator::barrier() {
  Scope scope(*this, "barrier(ncclAllReduce of one float)");
  require_live();
  check_fingerprint(Collective::kBarrier, 0, DType::kF32);
  void* one = barrier_.reserve(sizeof(float));
  check(api_.all_reduce(one, one, 1, DType::kF32, ReduceOp::kSum, comm_, stream_), "ncclAllReduce");
  synchronize();
}

std::unique_ptr<Communicator> NcclCommunicator::split(int color, int key) {
  Scope scope(*this, "split(ncclCommSplit)");
  require_live();
  ncclComm* child = nullptr;
  check(api_.comm_split(comm_, color, key, &child), "ncclCommSplit");
  const std::string name =
      group() + "/split" + std::to_string(splits_++) + ":" + std::to_string(color);
  if (!child) return nullptr;
  auto result = std::unique_ptr<NcclCommunicator>(new NcclCommunicator(api_, child, device_, name));
  pass_settings_to(*result);
  return result;
}

// ---- point to point, and the device-side reduce

void NcclCommunicator::transport_send(const void* data, std::size_t bytes, int dst, int) {
  require_live();
  check(api_.send(data, bytes, dst, comm_, stream_), "ncclSend");
  synchronize();
}

void NcclCommunicator::transport_recv(void* data, std::size_t bytes, int src, int) {
  require_live();
  check(api_.recv(data, bytes, src, comm_, stream_), "ncclRecv");
  synchronize();
}

void NcclCommunicator::transport_sendrecv(const void* out, std::size_t out_bytes, int dst, void* in,
                                          std::size_t in_bytes, int src, int) {
  require_live();
  Group group(*this);
  check(api_.send(out, out_bytes, dst, comm_, stream_), "ncclSend");
  check(api_.recv(in, in_bytes, src, comm_, stream_), "ncclRecv");
  group.end();
  synchronize();
}

void NcclCommunicator::transport_sendrecv_reduce(const void* out, std::size_t out_bytes, int dst,
                                                 Buffer inout, int src, int, ReduceOp op) {
  require_live();
  void* incoming = incoming_.reserve(inout.bytes());
  Group group(*this);
  check(api_.send(out, out_bytes, dst, comm_, stream_), "ncclSend");
  check(api_.recv(incoming, inout.bytes(), src, comm_, stream_), "ncclRecv");
  group.end();
  // Same stream: the kernel starts after the receive has landed.
  api_.device_reduce(inout, ConstBuffer(incoming, inout.count, inout.dtype), op, stream_);
  synchronize();
}

void NcclCommunicator::local_reduce(Buffer dst, ConstBuffer src, ReduceOp op) {
  require_live();
  BOOK_CHECK(dst.count == src.count && dst.dtype == src.dtype,
             where() << ": reduce_local needs the same count and type, got " << dst.count << " "
                     << dtype_name(dst.dtype) << " and " << src.count << " "
                     << dtype_name(src.dtype));
  api_.device_reduce(dst, src, op, stream_);
  synchronize();
}

void* NcclCommunicator::temporary_memory(std::size_t bytes) { return temporary_.reserve(bytes); }

void NcclCommunicator::exchange_fingerprints(const void* mine, std::size_t bytes, void* all) {
  // NCCL counts elements: the bytes go as f32 words, which an all-gather copies bit for bit.
  BOOK_CHECK(bytes % sizeof(float) == 0,
             where() << ": a fingerprint of " << bytes << " bytes is not whole f32 words");
  auto* gathered = static_cast<std::byte*>(fingerprints_.reserve(size() * bytes));
  std::byte* slot = gathered + static_cast<std::size_t>(rank()) * bytes;
  api_.copy_to_device(slot, mine, bytes, stream_);
  check(api_.all_gather(slot, gathered, bytes / sizeof(float), DType::kF32, comm_, stream_),
        "ncclAllGather");
  api_.copy_to_host(all, gathered, size() * bytes, stream_);
  synchronize();
}

}  // namespace book::coll
