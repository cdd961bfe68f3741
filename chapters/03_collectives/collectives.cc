// The collectives every backend inherits: check the arguments, pick an algorithm, run it over
// send/recv. The ring algorithms and all_to_all it calls are the exercises: their bodies come at
// link time, from the reference (":communicator", what chapters 5–8 link) or the track
// (":communicator_track"); see BUILD.
#include <numeric>
#include <sstream>

#include "chapters/03_collectives/algorithms.h"
#include "chapters/03_collectives/communicator.h"
#include "common/check.h"

namespace book::coll {

namespace {

std::string describe(const char* collective, Algorithm algorithm, std::size_t count, DType dtype) {
  std::ostringstream out;
  out << collective << "(" << algorithm_name(algorithm) << ", " << count << " x "
      << dtype_name(dtype) << ")";
  return out.str();
}

Algorithm pick(Algorithm requested, std::size_t bytes, std::size_t threshold) {
  if (requested != Algorithm::kAutomatic) return requested;
  return bytes < threshold ? Algorithm::kTree : Algorithm::kRing;
}

}  // namespace

void Communicator::all_reduce(Buffer data, ReduceOp op, Algorithm algorithm) {
  check_reduce_op(op, "Communicator::all_reduce");
  check_algorithm(algorithm, "Communicator::all_reduce");
  const Algorithm algo = pick(algorithm, data.bytes(), tree_threshold_bytes());
  Scope scope(*this, describe("all_reduce", algo, data.count, data.dtype));
  on_enter_collective();
  check_fingerprint(Collective::kAllReduce, data.count, data.dtype, op);
  BOOK_CHECK(data.data != nullptr || data.count == 0, where() << ": the buffer is null");
  BOOK_CHECK(algo != Algorithm::kNative,
             where() << ": Algorithm::kNative exists only on the MPI and NCCL backends");
  if (size() == 1) return;  // the sum, mean and max of one buffer is itself
  switch (algo) {
    case Algorithm::kRing:
      ring_all_reduce(*this, data, op);
      break;
    case Algorithm::kRingFused:
      ring_fused_all_reduce(*this, data, op);
      break;
    case Algorithm::kTree:
      tree_all_reduce(*this, data, op);
      break;
    case Algorithm::kNaive:
      naive_all_reduce(*this, data, op);
      break;
    case Algorithm::kAutomatic:  // pick() chose; kNative was refused above
    case Algorithm::kNative:
      BOOK_CHECK(false, where() << ": no algorithm chosen (a bug in pick)");
  }
}

void Communicator::reduce_scatter(ConstBuffer input, Buffer output, ReduceOp op,
                                  Algorithm algorithm) {
  check_reduce_op(op, "Communicator::reduce_scatter");
  check_algorithm(algorithm, "Communicator::reduce_scatter");
  const Algorithm algo = algorithm == Algorithm::kAutomatic ? Algorithm::kRing : algorithm;
  Scope scope(*this, describe("reduce_scatter", algo, input.count, input.dtype));
  on_enter_collective();
  check_fingerprint(Collective::kReduceScatter, input.count, input.dtype, op);
  const Shard mine = shard_of(input.count, size(), rank());
  BOOK_CHECK(output.count == mine.count && output.dtype == input.dtype,
             where() << ": rank " << rank() << "'s output must hold its shard of " << mine.count
                     << " " << dtype_name(input.dtype) << " elements (shard_of(" << input.count
                     << ", " << size() << ", " << rank() << ")), got " << output.count << " "
                     << dtype_name(output.dtype));
  BOOK_CHECK(algo == Algorithm::kRing || algo == Algorithm::kNaive,
             where() << ": reduce_scatter runs Algorithm::kRing or Algorithm::kNaive here");
  // The algorithms work in place on the whole buffer; the caller's input stays untouched.
  Buffer work{scratch(input.bytes()), input.count, input.dtype};
  copy_into(work, input);
  if (size() > 1) {
    if (algo == Algorithm::kRing)
      ring_reduce_scatter(*this, work, op);
    else
      naive_all_reduce(*this, work, op);  // naive: everything to rank 0 and back, keep mine
  }
  copy_into(output, work.slice(mine.offset, mine.count));
}

void Communicator::all_gather(ConstBuffer input, Buffer output, Algorithm algorithm) {
  check_algorithm(algorithm, "Communicator::all_gather");
  const Algorithm algo = algorithm == Algorithm::kAutomatic ? Algorithm::kRing : algorithm;
  Scope scope(*this, describe("all_gather", algo, output.count, output.dtype));
  on_enter_collective();
  check_fingerprint(Collective::kAllGather, output.count, output.dtype);
  const Shard mine = shard_of(output.count, size(), rank());
  BOOK_CHECK(input.count == mine.count && output.dtype == input.dtype,
             where() << ": rank " << rank() << "'s input must be its shard of " << mine.count << " "
                     << dtype_name(output.dtype) << " elements (shard_of(" << output.count << ", "
                     << size() << ", " << rank() << ")), got " << input.count << " "
                     << dtype_name(input.dtype));
  BOOK_CHECK(algo == Algorithm::kRing || algo == Algorithm::kNaive,
             where() << ": all_gather runs Algorithm::kRing or Algorithm::kNaive here");
  copy_into(output.slice(mine.offset, mine.count), input);
  if (size() == 1) return;
  if (algo == Algorithm::kRing) {
    ring_all_gather(*this, output);
    return;
  }
  // naive: every shard to rank 0, then the whole buffer from rank 0 to each rank.
  if (rank() != 0) {
    send(input, 0, kTagNaive);
    recv(output, 0, kTagNaive);
    return;
  }
  for (int r = 1; r < size(); ++r) {
    const Shard s = shard_of(output.count, size(), r);
    recv(output.slice(s.offset, s.count), r, kTagNaive);
  }
  for (int r = 1; r < size(); ++r) send(output, r, kTagNaive);
}

void Communicator::broadcast(Buffer data, int root) {
  Scope scope(*this, describe("broadcast", Algorithm::kTree, data.count, data.dtype));
  on_enter_collective();
  check_fingerprint(Collective::kBroadcast, data.count, data.dtype, std::nullopt, root);
  BOOK_CHECK(root >= 0 && root < size(), where() << ": root " << root
                                                 << " is not a rank of the group (0.." << size() - 1
                                                 << ")");
  if (size() > 1) tree_broadcast(*this, data, root);
}

void Communicator::reduce(ConstBuffer input, Buffer output, int root, ReduceOp op) {
  check_reduce_op(op, "Communicator::reduce");
  Scope scope(*this, describe("reduce", Algorithm::kTree, input.count, input.dtype));
  on_enter_collective();
  check_fingerprint(Collective::kReduce, input.count, input.dtype, op, root);
  BOOK_CHECK(root >= 0 && root < size(), where() << ": root " << root
                                                 << " is not a rank of the group (0.." << size() - 1
                                                 << ")");
  if (rank() == root)
    BOOK_CHECK(output.count == input.count && output.dtype == input.dtype,
               where() << ": the root's output must have the input's " << input.count << " "
                       << dtype_name(input.dtype) << " elements, got " << output.count << " "
                       << dtype_name(output.dtype));
  Buffer work{scratch(input.bytes()), input.count, input.dtype};
  copy_into(work, input);
  if (size() > 1) tree_reduce(*this, work, root, op);
  if (rank() == root) copy_into(output, work);
}

void Communicator::all_to_all(ConstBuffer input, std::span<const std::size_t> send_counts,
                              Buffer output, std::span<const std::size_t> recv_counts) {
  Scope scope(*this, describe("all_to_all", Algorithm::kAutomatic, input.count, input.dtype));
  on_enter_collective();
  check_fingerprint(Collective::kAllToAll, 0, input.dtype);
  check_all_to_all(input, send_counts, output, recv_counts);
  coll::all_to_all(*this, input, send_counts, output, recv_counts);
}

void Communicator::check_all_to_all(ConstBuffer input, std::span<const std::size_t> send_counts,
                                    Buffer output, std::span<const std::size_t> recv_counts) const {
  const auto n = static_cast<std::size_t>(size());
  BOOK_CHECK(send_counts.size() == n && recv_counts.size() == n,
             where() << ": send_counts and recv_counts need one entry per rank (" << n << "), got "
                     << send_counts.size() << " and " << recv_counts.size());
  const std::size_t sent = std::accumulate(send_counts.begin(), send_counts.end(), std::size_t{0});
  const std::size_t received =
      std::accumulate(recv_counts.begin(), recv_counts.end(), std::size_t{0});
  BOOK_CHECK(sent == input.count, where() << ": send_counts add up to " << sent
                                          << " but the input has " << input.count << " elements");
  BOOK_CHECK(received == output.count, where() << ": recv_counts add up to " << received
                                               << " but the output has " << output.count
                                               << " elements");
  BOOK_CHECK(input.dtype == output.dtype, where() << ": input is " << dtype_name(input.dtype)
                                                  << " but output is " << dtype_name(output.dtype));
  BOOK_CHECK(send_counts[rank()] == recv_counts[rank()],
             where() << ": rank " << rank() << " sends itself " << send_counts[rank()]
                     << " elements but expects " << recv_counts[rank()] << " from itself");
}

void Communicator::barrier() {
  Scope scope(*this, "barrier");
  on_enter_collective();
  check_fingerprint(Collective::kBarrier, 0, DType::kF32);
  // Dissemination: after round k every rank has heard, directly or not, from 2^(k+1) ranks.
  for (int distance = 1; distance < size(); distance <<= 1)
    sendrecv(ConstBuffer{}, (rank() + distance) % size(), Buffer{},
             (rank() - distance + size()) % size(), kTagBarrier);
}

}  // namespace book::coll
