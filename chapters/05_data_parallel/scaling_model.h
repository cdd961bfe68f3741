/// @file
/// Why 8 → 64 ranks may not scale: a step-time model of data-parallel training from the α-β cost
/// of a collective (Hockney's model, as chapter 3 uses it: a message of S bytes costs α + S/B).
///
/// A step on N ranks: compute = global batch × FLOPs per sample / (N × sustained FLOP/s), plus the
/// work every rank does whatever N (DDP's optimizer step: each rank updates the whole model); the
/// gradient all-reduce of S bytes in k buckets costs, with the ring,
///   T_comm = k · 2(N−1)α + 2(N−1)/N · S/B
/// (each bucket pays the latency once). With overlap, bucket i can start once backward has
/// produced it — after (i+1)/k of the backward pass, buckets running one after another — and only
/// what runs past the end of backward is exposed. Across nodes a flat ring runs at the slowest
/// link's pace; a hierarchical all-reduce (hierarchical.h) pays the fast links for 2(g−1)/g of S
/// and the slow ones for 2(M−1)/M of S/g. Perfect scaling is N × the one-rank rate; the efficiency
/// is how much of it is left.
#pragma once

#include <string>

namespace book::ddp {

/// One kind of link: per-message latency α and bandwidth B.
struct Link {
  double alpha_s = 0;        ///< α, seconds per message (a ring step)
  double bytes_per_s = 1e9;  ///< B, bytes per second each rank can send (busbw-like)
};

/// The machines: nodes of `ranks_per_node` ranks on fast links, joined by slower ones.
struct Cluster {
  Link intra;                 ///< inside a node (NVLink; here: threads sharing memory)
  Link inter;                 ///< between nodes (InfiniBand, Ethernet)
  int ranks_per_node = 8;     ///< g
  bool hierarchical = false;  ///< hierarchical all-reduce across nodes instead of one flat ring
};

/// The training job.
struct Workload {
  double gradient_bytes = 0;  ///< S: bytes all-reduced per step (parameters × bytes per gradient)
  double flops_per_sample = 0;        ///< training FLOPs of one sequence (6N·T + attention)
  double global_batch = 1;            ///< sequences per optimizer step, all ranks together
  double flops_per_s = 1e12;          ///< sustained FLOP/s of one rank
  double backward_share = 2.0 / 3.0;  ///< backward's share of compute: the window for overlap
  int buckets = 1;                    ///< k
  /// Seconds every rank spends per step whatever N: in DDP the optimizer step (every rank updates
  /// the whole model; ZeRO-1 shards it, chapter 6). Not overlapped with communication.
  double replicated_s = 0;
};

/// The model's answer for one N.
struct StepPrediction {
  int ranks = 1;             ///< N
  double compute_s = 0;      ///< forward + backward on one rank's share, plus replicated_s
  double comm_s = 0;         ///< the gradient all-reduce, start to end
  double exposed_s = 0;      ///< the part of comm_s backward does not hide
  double step_s = 0;         ///< compute_s + exposed_s
  double samples_per_s = 0;  ///< global_batch / step_s
  double efficiency = 0;     ///< samples_per_s / (N × the one-rank rate without communication)
};

/// 2(N−1)α + 2(N−1)/N · S/B: one ring all-reduce of `bytes` on N ranks (0 for N = 1). Requires
/// a finite α ≥ 0 and a finite B > 0.
double ring_all_reduce_seconds(int ranks, double bytes, const Link& link);

/// Reduce-scatter and all-gather inside nodes of g ranks (2(g−1)α_intra + 2(g−1)/g · S/B_intra)
/// plus a ring all-reduce of S/g across the M = N/g nodes on the inter-node link.
double hierarchical_all_reduce_seconds(int ranks, int ranks_per_node, double bytes,
                                       const Link& intra, const Link& inter);

/// One bucket's all-reduce on N ranks of `cluster`: intra-node links alone when N ≤ g; across
/// nodes a flat ring at the inter-node link's pace, or hierarchical_all_reduce_seconds. Throws
/// book::Error for ranks_per_node < 1 or a link whose α is negative or not finite or whose B is
/// not positive and finite.
double all_reduce_seconds(int ranks, double bytes, const Cluster& cluster);

/// The step on N ranks, with the buckets overlapping backward when `overlap`, else after it.
/// Throws book::Error for N < 1, a non-positive rate, batch or bucket count, a figure of the
/// workload that is negative or not finite, backward_share outside [0, 1], or a bad cluster (as
/// all_reduce_seconds).
StepPrediction predict_step(const Workload& workload, const Cluster& cluster, int ranks,
                            bool overlap);

/// α and B from two timed ring all-reduces on N ranks, one small (latency-bound) and one large:
/// solves t = 2(N−1)α + 2(N−1)/N · S/B for both. Throws book::Error for N < 2, sizes not
/// increasing, or times that give a negative α or B (then the measurement was noise: measure
/// longer).
Link fit_link(int ranks, double small_bytes, double small_s, double large_bytes, double large_s);

}  // namespace book::ddp
