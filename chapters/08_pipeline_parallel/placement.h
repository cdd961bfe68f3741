/// @file
/// Where each dimension of a 2 × 2 grid sits on 2 nodes × 2 ranks: the groups of one dimension
/// inside a node (shared memory), the other's across the slow link between nodes. Chapter 3's
/// ProcessGrid orders ranks tp fastest, then dp, then pp, and cluster.sh fills node 0 first, so
/// the grid's first dimension lands inside the nodes; a permuted world — world.split(0, key),
/// grid rank i being world rank order[i] — puts either dimension across without another mpirun.
/// Every placement of (tp, pp), (tp, dp) and (dp, pp) is then measured in one launch: step time,
/// the bytes and messages of the groups that span nodes (from their communicators' counters,
/// exact) and of those inside, the loss, and an α-β prediction from the link's measured latency
/// and bandwidth, so "TP inside a node, PP across nodes" is a measured ranking.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "chapters/03_collectives/cluster.h"
#include "chapters/03_collectives/communicator.h"
#include "chapters/03_collectives/process_grid.h"
#include "chapters/04_training_baseline/config.h"

namespace book::pp {

/// A dimension of the DP × TP × PP grid.
enum class Dim { kTp, kDp, kPp };

/// "TP", "DP" or "PP".
const char* dim_name(Dim dim);

/// One placement of a 2 × 2 grid on 2 nodes of 2 ranks: `inside`'s groups share a node,
/// `across`'s groups have one rank on each node. The third dimension has degree 1.
struct Placement {
  Dim inside = Dim::kTp;  ///< the dimension whose groups sit inside a node
  Dim across = Dim::kPp;  ///< the dimension whose groups cross the link

  /// Degree 2 for `inside` and `across`, 1 for the third.
  coll::GridDegrees degrees() const;
  /// order[i] = the world rank (node = world rank / 2) that plays grid rank i: node = the
  /// rank's `across` coordinate, place in the node = its `inside` coordinate.
  std::vector<int> order() const;
  /// "TP inside / PP across" (no comma: it is a CSV cell).
  std::string name() const;
};

/// The six placements: (tp, pp), (tp, dp) and (dp, pp), each dimension inside once.
std::vector<Placement> placements_2x2();

/// Refuses anything but 4 ranks as 2 nodes × 2 ranks: book::Error naming the world size or the
/// layout (layout.describe()) and what to run instead.
void check_2x2(int world_size, const coll::ClusterLayout& layout);

/// This rank's end of the permuted world of `placement`: world.split(0, key) with key = the grid
/// rank this world rank plays, so the new communicator's rank i is world rank order()[i]. Every
/// rank of the 4-rank `world` calls it.
std::unique_ptr<coll::Communicator> permuted_world(coll::Communicator& world,
                                                   const Placement& placement);

/// What the placements train and how often they are timed.
struct PlacementOptions {
  train::Config config = default_config();  ///< the model (tp = 2 must divide heads, vocab)
  int micro_batches = 4;                    ///< m per data-parallel replica
  int batch = 2;                            ///< sequences per micro-batch
  int repetitions = 7;                      ///< timed steps per placement, interleaved
  std::uint64_t seed = 35;                  ///< model and data
  /// 4 layers, d_model 32, 4 heads, vocabulary 16, context 12: a stage boundary's message is
  /// b·s·h·4 = 3072 bytes, the size the README's table was measured at.
  static train::Config default_config();
};

/// Messages and bytes sent by every rank of a set of groups together, in one step.
struct LinkTraffic {
  std::uint64_t messages = 0;  ///< messages sent (a 0-byte one counts)
  std::uint64_t bytes = 0;     ///< payload bytes sent
};

/// The traffic of one step of a placement: the `across` dimension's groups (the slow link) and
/// the `inside` dimension's (shared memory).
struct PlacementTraffic {
  LinkTraffic across;  ///< every rank's sends in the groups that span nodes
  LinkTraffic inside;  ///< every rank's sends in the groups inside nodes
};

/// The traffic the formulas predict for one step (1F1B, FP32) of `placement` over `options`,
/// summed over all 4 ranks. `grad_elements[s]` is the gradient size of a rank of pipeline stage
/// s (its slice; the data-parallel all-reduce moves it). Per dimension of degree 2:
/// - TP: a ring all-reduce of n elements over 2 ranks has each rank send n elements in 2
///   messages; per micro-batch each block all-reduces b·s·h 4 times (2 forward, 2 backward), the
///   first stage's embedding b·s·h once, the last stage's head b·s·h once and 2·b·s for the
///   vocabulary-parallel cross-entropy, which also all-gathers its b·s row maxima (a ring
///   all-gather over 2 ranks: each rank sends its b·s in 1 message).
/// - PP: every micro-batch's activation b·s·h goes forward and its gradient back, one message
///   each; the tied embedding's gradient (vocab/tp · h) is exchanged once, one message each way;
///   the loss is broadcast from the last stage (1 message of 8 bytes).
/// - DP: the gradient and the loss (1 double) all-reduced: both ranks send n elements, in 2
///   messages each over the ring, 1 each over the tree (below the communicator's tree threshold).
PlacementTraffic predict_traffic(const Placement& placement, const PlacementOptions& options,
                                 const std::vector<std::uint64_t>& grad_elements,
                                 std::size_t tree_threshold_bytes = 64 * 1024);

/// The two links' α (seconds per message) and B (bytes per second), from ping-pongs.
struct LinkCosts {
  double shm_alpha = 0;         ///< seconds per message inside a node (world ranks 0 ↔ 1)
  double shm_bytes_per_s = 0;   ///< bytes per second inside a node
  double link_alpha = 0;        ///< seconds per message across the link (world ranks 0 ↔ 2)
  double link_bytes_per_s = 0;  ///< bytes per second across the link
};

/// Measures LinkCosts with ping-pongs of 8 bytes (α: half the round trip) and 1 MiB (B) between
/// world rank 0 and 1 (same node) and 0 and 2 (across), medians of `repetitions`. Every rank
/// of the 4-rank world calls it.
LinkCosts measure_link_costs(coll::Communicator& world, int repetitions = 15);

/// One placement, measured.
struct PlacementResult {
  Placement placement;         ///< which dimension sits where
  double median_s = 0;         ///< step time, median over the repetitions
  double min_s = 0;            ///< the fastest repetition
  double max_s = 0;            ///< the slowest repetition
  PlacementTraffic counted;    ///< from the groups' counters (one step)
  PlacementTraffic predicted;  ///< predict_traffic
  double loss = 0;             ///< the step's loss (every step the same)
  double micro_batch_s = 0;    ///< t1: one micro-batch's step on one device, measured in the run
  /// Modelled compute: t1 · dp·m / 4 · (m + pp − 1) / m, t1 = one micro-batch on one device.
  double compute_s = 0;
  double predicted_s = 0;  ///< compute_s + the α-β time of the traffic
  int measured_rank = 0;   ///< 1 = fastest, by median_s
  int predicted_rank = 0;  ///< 1 = fastest, by predicted_s
};

/// Every placement of placements_2x2() on `world` (4 ranks, 2 × 2 by `layout`; check_2x2):
/// builds each placement's Rank3D<float> over its permuted world, then times `repetitions`
/// rounds in which each placement steps once (1F1B; a world barrier before and after each
/// step), counts one step's traffic per group, measures the links (measure_link_costs) and t1,
/// one micro-batch's forward and backward on one device, and predicts each step time with the
/// α-β cost of the counted per-rank messages and bytes on each link plus the step's dp·m
/// micro-batches' t1 shared by the 4 ranks and stretched by the pipeline bubble. Every rank
/// calls it and gets the same results. Time it with sgemm on one thread per rank
/// (gemm::SgemmThreads(1), as the stage does) where ranks share a machine's cores.
std::vector<PlacementResult> measure_placements(coll::Communicator& world,
                                                const coll::ClusterLayout& layout,
                                                const PlacementOptions& options,
                                                LinkCosts* costs = nullptr);

/// The loss one step of `placement`'s grid gives on 4 thread ranks in grid order (no
/// permutation): the reference every placement's loss must equal bit for bit.
double thread_reference_loss(const Placement& placement, const PlacementOptions& options);

}  // namespace book::pp
