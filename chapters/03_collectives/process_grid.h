/// @file
/// The process grid: one object that turns a world of N ranks into the data-, tensor-, pipeline-
/// and expert-parallel groups of 3D (and MoE) training, each a Communicator made with split(), and
/// tells each rank where it sits (picotron's ProcessGroupManager; Megatron-LM's rank order).
///
/// **Rank order.** Tensor-parallel ranks vary fastest, then data-parallel, then pipeline stages:
///
/// \f[ \text{rank} = t_\text{coord} + T\,(d_\text{coord} + D\,p_\text{coord}) \f]
///
/// for degrees T (tp), D (dp), P (pp), with T·D·P = N. So a tensor-parallel group is T
/// consecutive ranks (they share a node, where TP's per-layer all-reduces need NVLink), a
/// data-parallel group is D ranks T apart, and a pipeline group is P ranks T·D apart (stages cross
/// nodes, where only activations at stage boundaries travel). With 8 ranks as 2 × 2 × 2: tp groups
/// {0,1} {2,3} {4,5} {6,7}; dp groups {0,2} {1,3} {4,6} {5,7}; pp groups {0,4} {1,5} {2,6} {3,7}.
///
/// **Expert parallelism** is carved out of data parallelism (the degree E must divide D): the D
/// data-parallel ranks of one (tp, pp) pair are cut into D/E blocks of E consecutive dp
/// coordinates. An expert-parallel group is one block: dp coordinates b·E … b·E + E − 1, its rank
/// in the group e = d mod E, so its world ranks are t + T(b·E + e + D·p) for e = 0 … E−1 (E ranks
/// T apart). The expert-data-parallel group joins the ranks that hold the same experts: same
/// (tp, pp, e), every block b (D/E ranks T·E apart); expert gradients are averaged over it, not
/// over the whole data-parallel group.
#pragma once

#include <memory>
#include <string>

#include "chapters/03_collectives/communicator.h"

namespace book::coll {

/// How many ways each kind of parallelism splits the world.
struct GridDegrees {
  int dp = 1;  ///< Data-parallel degree D: replicas of the model.
  int tp = 1;  ///< Tensor-parallel degree T: ranks that split each layer.
  int pp = 1;  ///< Pipeline-parallel degree P: stages, each a range of layers.
  int ep = 1;  ///< Expert-parallel degree E: ranks that split the experts (divides dp).
};

/// Where one rank sits in the grid. Each coordinate is also the rank's rank in that group.
struct GridCoordinates {
  int dp = 0;         ///< Index in the data-parallel group, 0 … D−1.
  int tp = 0;         ///< Index in the tensor-parallel group, 0 … T−1.
  int pp = 0;         ///< Pipeline stage, 0 … P−1.
  int ep = 0;         ///< Index in the expert-parallel group: dp mod E.
  int expert_dp = 0;  ///< Index in the expert-data-parallel group: dp / E.
};

/// One rank's view of the DP × TP × PP (× EP) grid. Built by every rank of a world communicator
/// together (it splits it five times); owns the group communicators, not the world. Each group's
/// communicator is a separate object, so one thread per group may run at once (a communicator
/// itself serves one thread at a time, see communicator.h).
class ProcessGrid {
 public:
  /// Splits `world` into every group. Every rank of `world` calls it with the same degrees.
  /// @throws book::Error, on every rank alike and before any message is sent, if a degree is
  /// below 1, if dp·tp·pp is not world.size(), or if ep does not divide dp.
  ProcessGrid(Communicator& world, const GridDegrees& degrees);

  /// The checks of the constructor, without a communicator (e.g. before starting ranks).
  static void check(const GridDegrees& degrees, int world_size);
  /// The coordinates of world rank `rank` (0 ≤ rank < dp·tp·pp) under `degrees`.
  static GridCoordinates coordinates_of(const GridDegrees& degrees, int rank);
  /// The world rank at (dp, tp, pp) under `degrees`: tp + T·(dp + D·pp).
  static int world_rank_of(const GridDegrees& degrees, int dp, int tp, int pp);

  const GridDegrees& degrees() const { return degrees_; }              ///< The degrees.
  const GridCoordinates& coordinates() const { return coordinates_; }  ///< This rank's place.

  Communicator& world() { return world_; }           ///< The world the grid was built from.
  Communicator& tp() { return *tp_; }                ///< The T ranks that split each layer.
  Communicator& dp() { return *dp_; }                ///< The D replicas of this rank's shard.
  Communicator& pp() { return *pp_; }                ///< The P stages; rank = stage.
  Communicator& ep() { return *ep_; }                ///< The E ranks that split the experts.
  Communicator& expert_dp() { return *expert_dp_; }  ///< The D/E ranks with the same experts.

  /// Whether this rank runs the first pipeline stage (it reads the input tokens).
  bool is_first_stage() const { return coordinates_.pp == 0; }
  /// Whether this rank runs the last pipeline stage (it computes the loss).
  bool is_last_stage() const { return coordinates_.pp == degrees_.pp - 1; }
  /// The previous stage's rank in pp() (this stage − 1), where activations come from.
  /// @throws book::Error on the first stage.
  int previous_stage() const;
  /// The next stage's rank in pp() (this stage + 1), where activations go.
  /// @throws book::Error on the last stage.
  int next_stage() const;

  /// "dp=2 tp=2 pp=2 ep=1; world rank 5 = (dp 0, tp 1, pp 1, ep 0)", for messages.
  std::string describe() const;

 private:
  Communicator& world_;
  GridDegrees degrees_;
  GridCoordinates coordinates_;
  std::unique_ptr<Communicator> tp_, dp_, pp_, ep_, expert_dp_;
};

}  // namespace book::coll
