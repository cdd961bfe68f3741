/// @file
/// The simulator: runs a schedule's action lists with a cost per action and gives the timeline —
/// when each action starts and ends on its rank, the makespan, each rank's idle time (the bubble)
/// — and the activations each rank holds at its peak. The same lists run for real in
/// executor.h; both pictures come from the same data.
#pragma once

#include <optional>
#include <vector>

#include "chapters/08_pipeline_parallel/action.h"

namespace book::pp {

/// Cost of each action on every rank (time units: any). In a schedule without a split backward
/// a B costs backward + weight.
struct Costs {
  double forward = 1;   ///< F
  double backward = 1;  ///< B (input gradient)
  double weight = 1;    ///< W (weight gradient)
  double comm = 0;      ///< latency from an action's end to its dependant's start on another rank
};

/// An action identified across ranks: the op, the micro-batch, the virtual stage.
struct ActionKey {
  Op op = Op::kForward;                               ///< F, B or W
  int micro_batch = 0;                                ///< which micro-batch
  int virtual_stage = 0;                              ///< chunk·p + rank
  bool operator==(const ActionKey&) const = default;  ///< Same op, micro-batch, virtual stage.
};

/// The action on another rank (or this one) that `action` on `rank` waits for: F waits for the
/// F of the virtual stage before (none on the first), B for the B of the stage after (the F of
/// the same stage on the last), W for the B of the same stage. Nothing else crosses ranks.
std::optional<ActionKey> dependency_of(const Shape& shape, int rank, const Action& action);
/// The key of `action` on `rank`.
ActionKey key_of(const Shape& shape, int rank, const Action& action);

/// One action placed in time.
struct TimedAction {
  Action action;     ///< what ran
  double start = 0;  ///< when it started
  double end = 0;    ///< when it ended
};

/// A simulated (or measured) run.
struct Timeline {
  Shape shape;                                  ///< p, m, v
  std::vector<std::vector<TimedAction>> ranks;  ///< per rank, in the order run
  double makespan = 0;                          ///< the last end
  std::vector<double> busy;                     ///< per rank, the time spent in actions
  /// Idle time of `rank` up to the makespan.
  double idle(int rank) const { return makespan - busy.at(rank); }
  /// Idle time over all ranks divided by p · makespan: the bubble fraction.
  double bubble_fraction() const;
};

/// Runs `schedule` with `costs`: each rank runs its actions in order, each as soon as the rank is
/// free and its dependency (dependency_of) has ended (+ costs.comm across ranks). Throws
/// book::Error if the schedule is malformed (check_schedule) or deadlocks (naming what each stuck
/// rank waits for), or a cost is negative, infinite or NaN (or the costs add up past the
/// largest double).
Timeline simulate(const Schedule& schedule, const Costs& costs = {});

/// The textbook bubble fraction with F and B costs equal on every stage, (p−1)/(v·m+p−1): GPipe
/// and 1F1B at v = 1 (Huang et al., 2019; Narayanan et al., 2021), interleaved with v chunks.
double bubble_formula(const Shape& shape);

/// For each rank, the largest number of (micro-batch, chunk) pairs whose forward has run and
/// whose last backward action (B, or W when split) has not: activations held at the peak.
std::vector<int> peak_in_flight(const Schedule& schedule);

/// The number of point-to-point messages one step sends across rank boundaries: one forward and
/// one backward per micro-batch per boundary between consecutive virtual stages on different
/// ranks, 2·m·(p·v − 1) when p > 1. Interleaving multiplies the boundaries by v.
long long boundary_messages(const Shape& shape);

}  // namespace book::pp
