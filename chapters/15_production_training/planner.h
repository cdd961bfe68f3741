/// @file
/// A 3D planner: the interview's decision order as a program. Does the model fit on one device
/// (chapter 9's calculator)? Which links are fast (TP on the intra-node link, what crosses the
/// inter-node one)? How large is the cluster (DP takes the rest)? Given a model shape, a global
/// batch and a cluster, it lists every feasible (dp, tp, pp, placement, micro-batch, ZeRO stage),
/// ranks them by a step-time model built from the earlier chapters' formulas, and says why the
/// best one wins.
///
/// The step-time model of one optimizer step, per device (every term in seconds):
/// - a pipeline slot is one micro-batch through the slowest stage: its layers' FLOPs
///   (chapter 7's layer_flops, ×4/3 with full recomputation) and, on the last stage, the LM
///   head's 6·b·s·h·V, divided by tp and the device's sustained FLOP/s; plus TP's four
///   all-reduces of s·b·h per layer (chapter 5's all_reduce_seconds on the link the TP group
///   sits on); plus, with pp > 1, one activation and one gradient across a boundary (chapter 7's
///   pipeline_bytes_per_boundary, on the link the pipeline crosses);
/// - 1F1B runs m + p − 1 slots: m of work, p − 1 of bubble, (p−1)/(m+p−1) of the step;
/// - then DP's gradient all-reduce of the heaviest stage's gradients (hierarchical across nodes,
///   chapter 5's all_reduce_seconds; ZeRO-3 moves 1.5× as much: two all-gathers and a
///   reduce-scatter), not overlapped with backward (an upper bound on its cost).
///
/// Placement: the three groups are laid over the ranks in an order (innermost first); ranks fill
/// nodes in order, so a group of degree d whose inner groups span S ranks keeps min(d, g/S) of
/// its members in a node of g devices and crosses nodes when d is larger. Megatron-LM's order is
/// tp, dp, pp (TP innermost, PP outermost).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "chapters/05_data_parallel/scaling_model.h"
#include "chapters/06_zero/zero_options.h"
#include "chapters/09_memory_accounting/calculator.h"
#include "chapters/15_production_training/stage_memory.h"
#include "common/dtype.h"

namespace book::prod {

/// A cluster of identical devices: nodes of `devices_per_node`, fast links inside a node, slower
/// ones between nodes. Measured figures (the namespace cluster's) or sourced ones (H100 nodes).
struct ClusterSpec {
  std::string name = "cluster";  ///< for the tables
  int nodes = 1;                 ///< M
  int devices_per_node = 8;      ///< g
  double memory_bytes = 80e9;    ///< what one device holds
  double flops_per_s = 0;        ///< sustained FLOP/s of one device
  ddp::Link intra;               ///< α and B (per device) inside a node
  ddp::Link inter;               ///< α and B (per device) between nodes
  std::string source;            ///< where the figures come from
};

/// What the planner plans for.
struct PlanInput {
  mem::ModelShape shape;                                     ///< the model (chapter 9's shape)
  std::int64_t seq = 2048;                                   ///< s: positions per sequence
  std::int64_t global_batch = 0;                             ///< sequences per optimizer step
  DType precision = DType::kBF16;                            ///< mixed precision (or f32)
  mem::Optimizer optimizer = mem::Optimizer::kAdam;          ///< optimizer state
  mem::Recomputation recompute = mem::Recomputation::kNone;  ///< activation recomputation
  std::uint64_t overhead_bytes = 0;  ///< per device: CUDA context, workspaces (chapter 9)
  std::vector<int> micro_batch_sizes = {1, 2, 4, 8};  ///< candidate b
  /// The ZeRO stages to try over the DP group (all four by default).
  std::vector<zero::Stage> zero_stages = {zero::Stage::kDdp, zero::Stage::kZero1,
                                          zero::Stage::kZero2, zero::Stage::kZero3};
  ClusterSpec cluster;  ///< where it runs: every device of it is used
};

/// A parallel dimension.
enum class Dim {
  kTp,  ///< tensor parallelism
  kDp,  ///< data parallelism
  kPp,  ///< pipeline parallelism
};

/// One term of the step-time model.
enum class Term {
  kCompute,         ///< m slots of the slowest stage's FLOPs
  kTensorParallel,  ///< m slots of its TP all-reduces
  kPipelineSends,   ///< m slots of boundary sends
  kBubble,          ///< p − 1 slots of waiting (1F1B's fill and drain)
  kDataParallel,    ///< the gradient all-reduce (or ZeRO's collectives)
};

/// "compute", "TP all-reduces", "PP sends", "bubble", "DP all-reduce".
const char* term_name(Term term);

/// One feasible way to run the model, with its modelled step time.
struct Plan {
  int dp = 1;                                              ///< data-parallel degree
  int tp = 1;                                              ///< tensor-parallel degree
  int pp = 1;                                              ///< pipeline stages
  std::array<Dim, 3> order{Dim::kTp, Dim::kDp, Dim::kPp};  ///< placement, innermost first
  int micro_batch = 1;                                     ///< b: sequences per micro-batch
  std::int64_t micro_batches = 1;                          ///< m = global batch / (dp · b)
  zero::Stage zero = zero::Stage::kDdp;                    ///< what the DP group shards
  bool tp_crosses = false;                                 ///< some TP group spans nodes
  bool pp_crosses = false;             ///< some pipeline boundary is between nodes
  bool dp_crosses = false;             ///< some DP group spans nodes
  int dp_per_node = 1;                 ///< members of a DP group inside one node
  std::uint64_t calculator_bytes = 0;  ///< chapter 9's largest rank (even split of the layers)
  std::vector<int> boundaries;         ///< stage cuts, balanced by compute and memory
  std::vector<double> stage_bytes;     ///< each stage's bytes under those cuts (1F1B)
  double compute_s = 0;                ///< m slots of FLOPs on the slowest stage
  double tp_s = 0;                     ///< m slots of TP all-reduces
  double pp_s = 0;                     ///< m slots of boundary sends
  double bubble_s = 0;                 ///< p − 1 idle slots (all three above, per slot)
  double dp_s = 0;                     ///< the gradient all-reduce (or ZeRO's collectives)
  double step_s = 0;                   ///< the sum
  /// One term's seconds.
  double term(Term t) const;
  /// The largest term.
  Term dominant() const;
  /// "dp8 tp1 pp1 b2 zero1 [tp-dp-pp]" (the order only for dimensions of degree > 1).
  std::string name() const;
};

/// Every feasible plan for `input`, fastest first. On the namespace cluster (chapter 3's
/// ClusterLayout) with chapter 4's model, for instance:
/// \code
/// PlanInput in;
/// in.shape = mem::preset("book");
/// in.seq = in.shape.context;
/// in.global_batch = 16;
/// in.precision = DType::kF32;
/// in.cluster.nodes = layout.nodes, in.cluster.devices_per_node = layout.ranks_per_node;
/// in.cluster.memory_bytes = 1e9, in.cluster.flops_per_s = measured_flops;
/// in.cluster.intra = {alpha_shm, shm_bytes_per_s};
/// in.cluster.inter = {alpha_tcp, layout.tcp_bytes_per_s};
/// const std::vector<Plan> plans = rank_plans(in);  // the 2 x 2 placements among them
/// \endcode
/// Ties: the lower ZeRO stage first, then the fewer bytes.
/// Placements that put the same groups across nodes are one plan (the first order kept).
/// dp·tp·pp is every device of the cluster; tp divides the heads, key/value heads and width; pp
/// divides the layers; b divides global_batch/dp; the calculator's largest rank and every stage
/// of the memory-balanced partition fit the device. Throws book::Error for zero nodes or
/// devices, a non-positive memory, FLOP/s or bandwidth, a negative or non-finite α, a
/// non-positive global batch or micro-batch size, no ZeRO stage, a shape or setup chapter 9's
/// calculator refuses, a batch that no dp·b divides (saying which), and a model that fits
/// nowhere (saying the fewest bytes any plan needs per device against what a device has).
std::vector<Plan> rank_plans(const PlanInput& input);

/// One sentence: why `winner` is ahead of `next` — the term that differs most between them,
/// both values, and what in the plans causes it (a link crossed, the bubble, a ZeRO stage).
std::string why_ahead(const Plan& winner, const Plan& next);

/// The two worked clusters, figures sourced as chapters 5 and 7 source them: `nodes` DGX-H100-like
/// nodes of 8 H100 SXM (80 GB; 40% of the 989 TFLOP/s dense BF16 peak sustained; NVLink 450 GB/s
/// per direction, α 5 µs; one 400 Gb/s NDR InfiniBand port per GPU, 50 GB/s, α 10 µs).
ClusterSpec h100_cluster(int nodes);

}  // namespace book::prod
