/// @file
/// The collective algorithms, written over Communicator::send / recv / sendrecv / reduce_local.
/// The ring ones and all_to_all are the chapter's exercises (bodies in solutions/03_collectives,
/// stubs in exercises/03_collectives); tree and naive are given, for contrast.
///
/// Every function here is called by all ranks of `comm` together, works in place on `data` (the
/// same count and type on every rank), and cuts it into chunks with shard_of(count, size, i).
#pragma once

#include <span>

#include "chapters/03_collectives/communicator.h"

namespace book::coll {

/// Exercise coll.ring_reduce_scatter. N−1 steps around the ring (send to rank+1, receive from
/// rank−1, tag kTagRingReduceScatter): at step s (0-based) rank r sends chunk (r−s−1) mod N and
/// receives chunk (r−s−2) mod N, which it reduces into its own copy. Afterwards chunk r of rank
/// r's `data` holds the reduction (kAvg: divided by N) over all ranks; other chunks are scratch.
/// Rank r sends every chunk but its own: count − shard_of(count, N, r).count elements.
/// \exercise{coll.ring_reduce_scatter}
void ring_reduce_scatter(Communicator& comm, Buffer data, ReduceOp op);

/// Exercise coll.ring_all_gather. On entry chunk r of rank r's `data` is valid; N−1 steps later
/// every chunk is, on every rank. At step s rank r sends chunk (r−s) mod N to rank+1 and receives
/// chunk (r−s−1) mod N from rank−1 (tag kTagRingAllGather). Rank r sends every chunk but
/// chunk (r+1) mod N.
/// \exercise{coll.ring_all_gather}
void ring_all_gather(Communicator& comm, Buffer data);

/// Exercise coll.ring_all_reduce: ring reduce-scatter then ring all-gather, in place, so each
/// rank sends 2(N−1)/N of the buffer when N divides the count; in general exactly
/// 2·count − shard(r).count − shard((r+1) mod N).count elements.
/// \exercise{coll.ring_all_reduce}
void ring_all_reduce(Communicator& comm, Buffer data, ReduceOp op);

/// Exercise coll.ring_fused_all_reduce: the same ring, with each reduce-scatter step done by one
/// comm.sendrecv_reduce() instead of sendrecv() then reduce_local(): the incoming chunk is added
/// into this rank's chunk as it is read, with no copy in between (on the threads backend, straight
/// from the neighbour's buffer). Same messages, same bytes, and bit-identical results to
/// ring_all_reduce (the additions happen in the same order); one pass over memory less per step.
/// The all-gather half is ring_all_gather.
/// \exercise{coll.ring_fused_all_reduce}
void ring_fused_all_reduce(Communicator& comm, Buffer data, ReduceOp op);

/// Exercise coll.all_to_all: the pairwise exchange. Rank r copies its own block, then for
/// s = 1 … N−1 sends its block for rank (r+s) mod N and receives the block from rank (r−s) mod N
/// with one sendrecv (tag kTagAllToAll). Block j of `input` starts at the sum of send_counts[0..j),
/// block j of `output` at the sum of recv_counts[0..j). Counts are already validated.
/// \exercise{coll.all_to_all}
void all_to_all(Communicator& comm, ConstBuffer input, std::span<const std::size_t> send_counts,
                Buffer output, std::span<const std::size_t> recv_counts);

/// Given: binomial-tree reduce of `data` to `root` (only root's result is meaningful; other
/// ranks' `data` are scratch). ⌈log2 N⌉ levels; each non-root rank sends its buffer once.
void tree_reduce(Communicator& comm, Buffer data, int root, ReduceOp op);

/// Given: binomial-tree broadcast of root's `data`: ⌈log2 N⌉ levels, each rank receives once.
void tree_broadcast(Communicator& comm, Buffer data, int root);

/// Given: tree all-reduce = tree_reduce to rank 0 + tree_broadcast: 2⌈log2 N⌉ latency steps
/// instead of the ring's 2(N−1), but every step moves the whole buffer.
void tree_all_reduce(Communicator& comm, Buffer data, ReduceOp op);

/// Given: the naive all-reduce: every rank sends its buffer to rank 0, which reduces and sends
/// the result back to each. Rank 0 sends and receives (N−1)·S bytes.
void naive_all_reduce(Communicator& comm, Buffer data, ReduceOp op);

}  // namespace book::coll
