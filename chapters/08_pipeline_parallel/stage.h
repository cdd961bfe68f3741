/// @file
/// The `pipeline` stage in named steps (pipeline.cc calls them in order): parse the command line;
/// each schedule simulated with unit costs against its formula and run for real on p thread
/// ranks against the one-device step; stage balancing on GPT-2 small; the DP × TP × PP
/// composition; the tour lines. Under mpirun (--backend mpi) only the real step runs, one stage
/// per process; with --cluster, under tools/cluster/cluster.sh, the placements of a 2 x 2 grid.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "chapters/04_training_baseline/config.h"
#include "chapters/04_training_baseline/data.h"
#include "chapters/08_pipeline_parallel/action.h"

namespace book::pp::stage {

/// The stage's command line.
struct StageOptions {
  std::vector<std::string> schedules = {"1f1b"};  ///< the schedules to run, by name
  int stages = 4;                                 ///< p, pipeline ranks (threads)
  int micro_batches = 8;                          ///< m
  int chunks = 2;                                 ///< v of the interleaved schedule
  int layers = 8;                                 ///< transformer blocks
  int d_model = 32;                               ///< model width
  int heads = 4;                                  ///< attention heads
  int batch = 2;                                  ///< sequences per micro-batch
  bool tour = false;                              ///< the tour's short run
  std::string backend = "threads";                ///< threads, or mpi: one stage per process
  bool cluster = false;  ///< with --backend mpi: the 2 x 2 placements on the namespace cluster
  int repetitions = 7;   ///< --cluster: timed steps per placement
};

/// Parses the flags (--help lists them) and checks that every schedule asked for can run:
/// d_model a multiple of heads, at least one layer per (virtual) stage, layers that p·v divides
/// for interleaving, m a multiple of p for interleaving and m ≥ p for ZB-H1. Throws book::Error
/// (a UsageError for the flags themselves) naming the value and what to pass instead.
StageOptions parse_stage_options(int argc, const char* const* argv);

/// What every real step of the stage trains: the model `options` describe (vocabulary 12,
/// context 11), its m micro-batches, and the one-device step's loss on them.
struct Workload {
  train::Config config;             ///< the model's shape
  std::vector<train::Batch> micro;  ///< the step's micro-batches (seed 8)
  double single_loss = 0;           ///< the loss of one device running all of them
};

/// The stage's workload; a one-device step computes its loss.
Workload make_workload(const StageOptions& options);

/// One schedule, simulated and run.
struct ScheduleRow {
  std::string schedule;              ///< its name
  Shape shape;                       ///< p, m, v
  double simulated = 0;              ///< bubble fraction, unit costs
  double formula = 0;                ///< the formula's bubble
  double executed = 0;               ///< wall-clock idle share of the real run
  double idle_rank0 = 0;             ///< rank 0's idle slots, simulated
  std::vector<int> peaks;            ///< micro-batches in flight per rank at its peak (sim)
  std::vector<int> executed_peaks;   ///< the same, counted in the real run
  long long messages = 0;            ///< boundary messages per step
  std::uint64_t boundary_bytes = 0;  ///< per message: one micro-batch across one boundary
  double loss = 0;                   ///< the real step's loss
  double single_loss = 0;            ///< the one device's
  /// |loss − single_loss| / |single_loss|.
  double deviation() const;
};

/// Every schedule of `options` simulated and run on p thread ranks (progress printed as it goes),
/// each writing its timelines (simulated and executed, .tsv) and Chrome trace; then prints the
/// table and writes it (CSV, JSON) to the results folder.
std::vector<ScheduleRow> run_schedules(const StageOptions& options);

/// Stage balancing on GPT-2 small for one stage count: the even cuts and partition_layers'.
struct Balance {
  int stages = 0;               ///< p
  std::vector<int> even;        ///< the cuts by layer count
  std::vector<int> balanced;    ///< partition_layers' cuts
  double even_largest = 0;      ///< the slowest even stage, MFLOP per token
  double balanced_largest = 0;  ///< the slowest balanced stage
  double ideal = 0;             ///< a perfect split
};

/// Balances GPT-2 small over 2, 4 and 6 stages, prints the table and writes it (CSV).
std::vector<Balance> run_balance();

/// The 3D composition's result.
struct ThreeD {
  double loss = 0;         ///< the 8 ranks' loss
  double single_loss = 0;  ///< the one device's, over both replicas' micro-batches
  int tp_all_reduces = 0;  ///< on world rank 0, over its tensor-parallel group
  /// |loss − single_loss| / |single_loss|.
  double deviation() const;
};

/// DP × TP × PP = 2 × 2 × 2 on 8 thread ranks, 1F1B, in double precision, against one device
/// running both replicas' micro-batches; prints the result.
ThreeD run_three_d();

/// The tour's lines (tour runs only), in the order of the root README's table.
void print_tour(const std::vector<ScheduleRow>& rows, const std::vector<Balance>& balances,
                const ThreeD& three_d);

/// --backend mpi: every schedule's real step as one stage per process of mpirun, its loss
/// against the one-device step (every process runs that too) and the bytes per boundary
/// message, printed by rank 0.
int run_mpi(const StageOptions& options, int argc, char** argv);

/// --backend mpi --cluster: every placement of a 2 x 2 grid on the namespace cluster's 2 nodes x
/// 2 ranks (placement.h, measure_placements), each loss against the same grid on thread ranks,
/// measured and predicted ranks side by side; rank 0 prints the table and writes
/// ch08_cluster_placements.csv. Outside the cluster: book::Error saying how to run it.
int run_cluster(const StageOptions& options, int argc, char** argv);

/// "0 1 2": the numbers separated by spaces.
std::string list(const std::vector<int>& v);

}  // namespace book::pp::stage
