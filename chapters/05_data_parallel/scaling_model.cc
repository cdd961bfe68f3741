// The α-β step-time model of data-parallel training.
#include "chapters/05_data_parallel/scaling_model.h"

#include <algorithm>
#include <cmath>

#include "common/check.h"

namespace book::ddp {
namespace {

// A NaN, negative or infinite figure would not stop the model: it would answer NaN or a
// nonsense efficiency, so every figure is checked where it enters.
void check_link(const char* caller, const char* which, const Link& link) {
  BOOK_CHECK(std::isfinite(link.alpha_s) && link.alpha_s >= 0,
             caller << ": the " << which << " link's alpha_s must be finite and >= 0, got "
                    << link.alpha_s);
  BOOK_CHECK(std::isfinite(link.bytes_per_s) && link.bytes_per_s > 0,
             caller << ": the " << which << " link's bytes_per_s must be finite and positive, got "
                    << link.bytes_per_s);
}

void check_cluster(const char* caller, const Cluster& cluster) {
  BOOK_CHECK(cluster.ranks_per_node >= 1,
             caller << ": ranks_per_node must be >= 1, got " << cluster.ranks_per_node);
  check_link(caller, "intra-node", cluster.intra);
  check_link(caller, "inter-node", cluster.inter);
}

void check_workload(const Workload& w) {
  BOOK_CHECK(std::isfinite(w.gradient_bytes) && w.gradient_bytes >= 0,
             "predict_step: gradient_bytes must be finite and >= 0, got " << w.gradient_bytes);
  BOOK_CHECK(std::isfinite(w.flops_per_sample) && std::isfinite(w.global_batch) &&
                 std::isfinite(w.flops_per_s) && std::isfinite(w.replicated_s),
             "predict_step: every figure of the workload must be finite, got "
                 << w.flops_per_sample << " FLOPs per sample, batch " << w.global_batch << ", "
                 << w.flops_per_s << " FLOP/s, replicated_s " << w.replicated_s);
  BOOK_CHECK(w.backward_share >= 0 && w.backward_share <= 1,
             "predict_step: backward_share is backward's share of compute, in [0, 1]; got "
                 << w.backward_share);
}

}  // namespace

double ring_all_reduce_seconds(int ranks, double bytes, const Link& link) {
  BOOK_CHECK(ranks >= 1 && link.bytes_per_s > 0 && bytes >= 0,
             "ring_all_reduce_seconds: needs ranks >= 1, bytes >= 0 and a positive bandwidth, got "
                 << ranks << ", " << bytes << ", " << link.bytes_per_s);
  check_link("ring_all_reduce_seconds", "given", link);
  if (ranks == 1) return 0;
  const double steps = 2.0 * (ranks - 1);
  return steps * link.alpha_s + steps / ranks * bytes / link.bytes_per_s;
}

double hierarchical_all_reduce_seconds(int ranks, int ranks_per_node, double bytes,
                                       const Link& intra, const Link& inter) {
  BOOK_CHECK(ranks_per_node >= 1 && ranks % ranks_per_node == 0,
             "hierarchical_all_reduce_seconds: nodes of " << ranks_per_node
                                                          << " ranks do not divide " << ranks);
  const int g = ranks_per_node, nodes = ranks / ranks_per_node;
  // Reduce-scatter plus all-gather inside the node move what one ring all-reduce moves.
  return ring_all_reduce_seconds(g, bytes, intra) +
         ring_all_reduce_seconds(nodes, bytes / g, inter);
}

double all_reduce_seconds(int ranks, double bytes, const Cluster& cluster) {
  check_cluster("all_reduce_seconds", cluster);  // ranks % 0 was a SIGFPE
  if (ranks <= cluster.ranks_per_node) return ring_all_reduce_seconds(ranks, bytes, cluster.intra);
  if (cluster.hierarchical && ranks % cluster.ranks_per_node == 0)
    return hierarchical_all_reduce_seconds(ranks, cluster.ranks_per_node, bytes, cluster.intra,
                                           cluster.inter);
  // A flat ring across nodes: every step waits for its slowest link.
  const Link slowest{std::max(cluster.intra.alpha_s, cluster.inter.alpha_s),
                     std::min(cluster.intra.bytes_per_s, cluster.inter.bytes_per_s)};
  return ring_all_reduce_seconds(ranks, bytes, slowest);
}

//! [predict_step]
StepPrediction predict_step(const Workload& w, const Cluster& cluster, int ranks, bool overlap) {
  BOOK_CHECK(ranks >= 1 && w.flops_per_s > 0 && w.global_batch > 0 && w.buckets >= 1 &&
                 w.flops_per_sample > 0,
             "predict_step: needs ranks >= 1, positive FLOP/s, batch, FLOPs per sample and "
             "buckets, got N = "
                 << ranks << ", " << w.flops_per_s << " FLOP/s, batch " << w.global_batch << ", "
                 << w.buckets << " buckets");
  check_workload(w);
  check_cluster("predict_step", cluster);
  StepPrediction p;
  p.ranks = ranks;
  BOOK_CHECK(w.replicated_s >= 0,
             "predict_step: replicated_s must be >= 0, got " << w.replicated_s);
  const double divided_s = w.global_batch * w.flops_per_sample / (ranks * w.flops_per_s);
  p.compute_s = divided_s + w.replicated_s;
  const double bucket_s = all_reduce_seconds(ranks, w.gradient_bytes / w.buckets, cluster);
  p.comm_s = w.buckets * bucket_s;
  if (overlap) {
    // Bucket i is ready after (i+1)/k of backward; the buckets run one after another.
    const double backward_s = w.backward_share * divided_s;
    const double forward_s = divided_s - backward_s;
    double finished = 0;
    for (int i = 0; i < w.buckets; ++i) {
      const double ready = forward_s + backward_s * (i + 1) / w.buckets;
      finished = std::max(finished, ready) + bucket_s;
    }
    p.exposed_s = std::max(0.0, finished - divided_s);  // the optimizer waits for the gradients
  } else {
    p.exposed_s = p.comm_s;
  }
  p.step_s = p.compute_s + p.exposed_s;
  p.samples_per_s = w.global_batch / p.step_s;
  // One rank alone, without communication: samples per second.
  const double one_rank_rate =
      w.global_batch / (w.global_batch * w.flops_per_sample / w.flops_per_s + w.replicated_s);
  p.efficiency = p.samples_per_s / (ranks * one_rank_rate);
  return p;
}
//! [predict_step]

Link fit_link(int ranks, double small_bytes, double small_s, double large_bytes, double large_s) {
  BOOK_CHECK(ranks >= 2 && small_bytes >= 0 && large_bytes > small_bytes,
             "fit_link: needs N >= 2 and a large size above the small one, got N = "
                 << ranks << ", " << small_bytes << " and " << large_bytes << " bytes");
  const double steps = 2.0 * (ranks - 1);
  const double per_byte = (large_s - small_s) / ((large_bytes - small_bytes) * steps / ranks);
  const double alpha = (small_s - steps / ranks * small_bytes * per_byte) / steps;
  BOOK_CHECK(per_byte > 0 && alpha >= 0, "fit_link: the times "
                                             << small_s << " s and " << large_s
                                             << " s give no positive latency and bandwidth; the "
                                                "measurement was noise, time more repetitions");
  return {alpha, 1.0 / per_byte};
}

}  // namespace book::ddp
