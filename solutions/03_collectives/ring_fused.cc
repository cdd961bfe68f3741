// Reference solution of coll.ring_fused_all_reduce.
#include "chapters/03_collectives/algorithms.h"

namespace book::coll {

//! [ring_fused]
void ring_fused_all_reduce(Communicator& comm, Buffer data, ReduceOp op) {
  const int n = comm.size(), r = comm.rank();
  const int next = (r + 1) % n, prev = (r + n - 1) % n;
  const ReduceOp step_op = op == ReduceOp::kAvg ? ReduceOp::kSum : op;
  for (int step = 0; step < n - 1; ++step) {
    const Shard out = shard_of(data.count, n, ((r - step - 1) % n + n) % n);
    const Shard in = shard_of(data.count, n, ((r - step - 2) % n + n) % n);
    // One pass: read the neighbour's partial sum and add it into ours, no landing buffer.
    comm.sendrecv_reduce(data.slice(out.offset, out.count), next, data.slice(in.offset, in.count),
                         prev, kTagRingReduceScatter, step_op);
  }
  if (op == ReduceOp::kAvg) {
    const Shard mine = shard_of(data.count, n, r);
    scale(data.slice(mine.offset, mine.count), 1.0 / n);
  }
  ring_all_gather(comm, data);
}
//! [ring_fused]

}  // namespace book::coll
