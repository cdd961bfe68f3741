/// @file
/// The planner held against measurement: `planner --cluster` under tools/cluster/cluster.sh
/// (2 nodes × 2 ranks) times chapter 8's six placements of a 2 × 2 grid, gives the planner this
/// cluster's measured links and compute as its cluster, and prints, grid by grid, which
/// placement each says wins (planner_cluster.cc).
#pragma once

#include "chapters/08_pipeline_parallel/placement.h"
#include "chapters/15_production_training/planner.h"

namespace book::prod {

/// The planner's input for chapter 8's placements' model and batch on the 2 × 2 namespace
/// cluster, with `dp` replicas: intra- and inter-node α and B from `costs`, and the sustained
/// FLOP/s that makes the planner's compute of one micro-batch on one device equal the measured
/// `micro_batch_s` (t1). FP32, plain DP, b = options.batch, global batch dp·m·b. Throws
/// book::Error for a non-positive t1 or bandwidth.
PlanInput placements_plan_input(const pp::PlacementOptions& options, const pp::LinkCosts& costs,
                                double micro_batch_s, int dp);

/// The whole check, every rank of an MPI world of 4 under the cluster calls it (rank 0 prints):
/// refuses outside the cluster or another layout (chapter 8's check_2x2). `tour`: 5 repetitions
/// and the tour's line.
int run_planner_cluster(int argc, char** argv, bool tour);

}  // namespace book::prod
