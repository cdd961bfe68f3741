/// @file
/// Expert parallelism's communication: each rank routes its own tokens, then one all-to-all sends
/// every kept (token, expert) choice to the rank that holds the expert (dispatch), and after the
/// experts have run, a second all-to-all brings the outputs back to the tokens' ranks, where they
/// are added, weighted by the router's gates (combine). The counts are uneven — they are whatever
/// the router decided — so each rank first tells every other how many rows to expect, with a
/// small all-to-all of counts. Chapter 3's Communicator::all_to_all does both exchanges.
#pragma once

#include <cstddef>
#include <numeric>
#include <vector>

#include "chapters/03_collectives/communicator.h"
#include "chapters/07_tensor_parallel/moe_routing.h"

namespace book::ep {

/// One rank's routes through one MoE layer's all-to-alls: filled by dispatch(), read by
/// combine() and by the backward pass, which sends gradients along the same routes the other way.
struct DispatchPlan {
  /// [ranks] rows this rank sent to each rank (its kept choices whose expert lives there).
  std::vector<std::size_t> send_rows;
  /// [ranks] rows it received from each rank.
  std::vector<std::size_t> recv_rows;
  /// [ranks × E/ranks] rows received from source s for this rank's local expert j, at
  /// s · (E/ranks) + j. In `received`, source s's rows come as one block, expert by expert.
  std::vector<std::size_t> recv_per_expert;
  /// [Σ send_rows] the choice n·k + i each sent row carries, in send order: by destination rank,
  /// then expert, then slot (so by expert, then slot, since experts are numbered rank by rank).
  std::vector<int> order;

  /// Rows sent, Σ send_rows (= the routing's kept choices).
  std::size_t rows_sent() const {
    return std::accumulate(send_rows.begin(), send_rows.end(), std::size_t{0});
  }
  /// Rows received, Σ recv_rows (what this rank's experts compute on).
  std::size_t rows_received() const {
    return std::accumulate(recv_rows.begin(), recv_rows.end(), std::size_t{0});
  }
};

/// Exercise ep.dispatch_combine (dispatch): sends every kept choice of `routing` — the row
/// x[n] [channels] of its token n — to the rank of `placement` that holds its expert. Fills
/// `plan` (order and send_rows from the routing; then one comm.all_to_all of the per-expert
/// counts, E/ranks numbers to each rank, as T, to learn recv_per_expert and recv_rows) and
/// `received` (resized to rows_received() · channels) with one comm.all_to_all of the rows, uneven
/// counts: source rank by source rank, within a source expert by expert, in slot order.
/// `comm` is the expert-parallel group (size placement.ranks, rank placement.rank). First call
/// check_dispatch(routing, placement, comm.size(), comm.rank()) (moe_routing.h), which throws
/// book::Error on a placement that does not fit the routing or the group.
/// \exercise{ep.dispatch_combine}
template <typename T>
void dispatch(const T* x, int channels, const Routing& routing, const ExpertPlacement& placement,
              coll::Communicator& comm, DispatchPlan& plan, std::vector<T>& received);

/// Exercise ep.dispatch_combine (combine): `expert_out` holds the experts' outputs for the rows
/// dispatch() received, in the same order. One comm.all_to_all sends each back to its source
/// (counts plan.recv_rows out, plan.send_rows in), into `returned` (resized to rows_sent() ·
/// channels, in plan.order); then each kept choice c of token n **adds** gates[c] · its returned
/// row into y[n] [channels]. Dropped choices add nothing.
/// \exercise{ep.dispatch_combine}
template <typename T>
void combine(const T* expert_out, int channels, const Routing& routing, const T* gates,
             const DispatchPlan& plan, coll::Communicator& comm, std::vector<T>& returned, T* y);

}  // namespace book::ep
