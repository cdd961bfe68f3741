/// @file
/// A pipeline schedule as data: for each rank, the list of actions it runs in order. A forward
/// F(mb, chunk) runs micro-batch `mb` through the chunk's layers, a backward B computes the input
/// gradient (and, in schedules without a split backward, the weight gradient too), a weight
/// backward W the weight gradient alone. The sends and receives are implied: a forward on a
/// virtual stage past the first receives its input from the stage before, and sends its output
/// on; a backward receives the output gradient from the stage after and sends the input gradient
/// back. The simulator (simulator.h) and the executor (executor.h) run the same lists.
///
/// With v chunks per rank (interleaving), the model is cut into p·v virtual stages and rank r
/// holds virtual stages r, r + p, ..., r + (v−1)·p (Megatron-LM's assignment).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace book::pp {

/// What an action does.
enum class Op {
  kForward,   ///< F: the chunk's forward pass on one micro-batch
  kBackward,  ///< B: the input gradient (with the weight gradient too unless split_backward)
  kWeight,    ///< W: the weight gradient alone (split-backward schedules: zero bubble)
};

/// One step of one rank.
struct Action {
  Op op = Op::kForward;  ///< F, B or W
  int micro_batch = 0;   ///< which micro-batch, 0..m−1
  int chunk = 0;         ///< which of the rank's chunks, 0..v−1 (0 without interleaving)
  bool operator==(const Action&) const = default;  ///< Same op, micro-batch and chunk.
};

/// The letter of an op: "F", "B" or "W".
std::string_view op_letter(Op op);
/// "F3" or, with chunks, "F3.1" (micro-batch 3, chunk 1).
std::string action_name(const Action& action, bool with_chunk);

/// The size of a pipeline: p ranks (stages), m micro-batches, v chunks per rank.
struct Shape {
  int stages = 1;         ///< p
  int micro_batches = 1;  ///< m
  int chunks = 1;         ///< v (1: no interleaving)
  /// Virtual stages, p·v.
  int virtual_stages() const { return stages * chunks; }
  /// The virtual stage of `chunk` on `rank`: chunk·p + rank.
  int virtual_stage(int rank, int chunk) const { return chunk * stages + rank; }
};

/// Throws book::Error (starting with `who`) unless p ≥ 1, m ≥ 1, v ≥ 1 and p·v fits an int,
/// naming the value.
void check_shape(const Shape& shape, std::string_view who);

/// A schedule: per rank, its actions in order.
struct Schedule {
  std::string name;                        ///< "gpipe", "1f1b", "interleaved", "zb-h1"
  Shape shape;                             ///< p, m, v
  bool split_backward = false;             ///< whether B and W are separate actions
  std::vector<std::vector<Action>> ranks;  ///< ranks[r]: rank r's actions, in order
};

/// Throws book::Error (naming the rank and the action) unless every rank runs every (micro-batch,
/// chunk) exactly once as F and once as B (and once as W when split_backward), each F before its
/// B before its W, and nothing else. Says nothing about deadlock: simulate() finds that.
void check_schedule(const Schedule& schedule);

/// GPipe (Huang et al., 2019): every forward, then every backward, micro-batches in order.
/// Every rank holds all m micro-batches' activations at the turn.
Schedule gpipe_schedule(const Shape& shape);

}  // namespace book::pp
