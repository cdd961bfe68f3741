// Reference solutions of coll.ring_reduce_scatter, coll.ring_all_gather, coll.ring_all_reduce.
#include "chapters/03_collectives/algorithms.h"

namespace book::coll {

namespace {
int wrap(int i, int n) { return ((i % n) + n) % n; }
}  // namespace

//! [ring_reduce_scatter]
void ring_reduce_scatter(Communicator& comm, Buffer data, ReduceOp op) {
  const int n = comm.size(), r = comm.rank();
  const int next = wrap(r + 1, n), prev = wrap(r - 1, n);
  const ReduceOp step_op = op == ReduceOp::kAvg ? ReduceOp::kSum : op;
  // The largest chunk is shard 0's; one temporary holds any incoming chunk.
  const Buffer incoming = comm.temporary(shard_of(data.count, n, 0).count, data.dtype);
  for (int step = 0; step < n - 1; ++step) {
    const Shard out = shard_of(data.count, n, wrap(r - step - 1, n));
    const Shard in = shard_of(data.count, n, wrap(r - step - 2, n));
    const Buffer received = incoming.slice(0, in.count);
    comm.sendrecv(data.slice(out.offset, out.count), next, received, prev, kTagRingReduceScatter);
    // What arrived is rank prev's partial sum of this chunk over `step + 1` ranks; adding ours
    // makes it `step + 2`, and the chunk we send next step is exactly this one.
    comm.reduce_local(data.slice(in.offset, in.count), received, step_op);
  }
  if (op == ReduceOp::kAvg) {
    const Shard mine = shard_of(data.count, n, r);
    scale(data.slice(mine.offset, mine.count), 1.0 / n);
  }
}
//! [ring_reduce_scatter]

//! [ring_all_gather]
void ring_all_gather(Communicator& comm, Buffer data) {
  const int n = comm.size(), r = comm.rank();
  const int next = wrap(r + 1, n), prev = wrap(r - 1, n);
  for (int step = 0; step < n - 1; ++step) {
    const Shard out = shard_of(data.count, n, wrap(r - step, n));
    const Shard in = shard_of(data.count, n, wrap(r - step - 1, n));
    // No reduction: the finished chunk lands straight in its place.
    comm.sendrecv(data.slice(out.offset, out.count), next, data.slice(in.offset, in.count), prev,
                  kTagRingAllGather);
  }
}
//! [ring_all_gather]

//! [ring_all_reduce]
void ring_all_reduce(Communicator& comm, Buffer data, ReduceOp op) {
  ring_reduce_scatter(comm, data, op);  // rank r now owns the finished chunk r
  ring_all_gather(comm, data);          // pass the finished chunks around once more
}
//! [ring_all_reduce]

}  // namespace book::coll
