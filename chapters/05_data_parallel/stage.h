/// @file
/// The `ddp` stage in named steps (ddp.cc calls them in order): parse the command line, run the
/// ladder (every rung at every N, against chapter 4's one-device run), draw the overlap trace, the
/// scaling analysis (α-β measured here, the step-time model for 8 → 64 GPUs, hierarchical bytes
/// across nodes), the bottleneck classifier on injected delays, uneven work, stability, and the
/// tour lines.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "chapters/03_collectives/communicator.h"
#include "chapters/05_data_parallel/ddp_options.h"
#include "chapters/05_data_parallel/scaling_model.h"

namespace book::ddp::stage {

/// The stage's command line.
struct StageOptions {
  bool tour = false;                      ///< the tour's short run
  std::string backend = "threads";        ///< "threads" (N thread ranks) or "mpi" (under mpirun)
  std::vector<int> ranks = {1, 2, 4};     ///< thread ranks to run (threads backend)
  std::vector<Rung> rungs = all_rungs();  ///< rungs to run
  int steps = 12;                         ///< timed steps per rung and N
  int warmup = 2;                         ///< untimed steps first
  int layers = 4;                         ///< the model: blocks
  int d_model = 128;                      ///< width
  int heads = 4;                          ///< attention heads
  int micro_batch = 16;                   ///< global micro-batch, sequences
  int accumulation = 2;                   ///< micro-batches per step
  int digits = 2;                         ///< addition task
  std::int64_t bucket_kib = 256;  ///< bucket cap (the model's 3 MiB of gradients in ~13 buckets)
  bool analysis = true;    ///< after the ladder: trace, scaling, bottlenecks, uneven, stability
  std::string trace_file;  ///< where the overlap trace goes (default: results folder)
  /// --cluster (MPI backend only): under tools/cluster/cluster.sh, the cluster analysis
  /// (stage_cluster.cc) instead of the ladder; rungs flat and no-sync, 6 steps after 1 warm-up,
  /// unless given.
  bool cluster = false;
};

/// Parses the command line; `--tour` shortens everything it does not set. Throws
/// book::UsageError for a bad command line (book::HelpRequested for --help).
StageOptions parse_stage_options(int argc, const char* const* argv);

/// The data-parallel run the stage's ladder trains at `rung`.
DdpOptions run_options(const StageOptions& options, Rung rung);

/// One rung at one N, measured.
struct LadderRow {
  Rung rung = Rung::kFlat;       ///< the rung
  int ranks = 1;                 ///< N
  double step_ms = 0;            ///< median step time (rank 0)
  double tokens_per_s = 0;       ///< all ranks together
  double gradient_mib = 0;       ///< bytes sent per rank per step, mean over ranks
  double gradient_ratio = 0;     ///< ÷ (2(N−1)/N × gradient bytes × syncs per step)
  std::int64_t collectives = 0;  ///< per step
  double hidden = 0;             ///< median share of communication hidden by backward
  double compute_ms = 0;         ///< median forward + backward time (rank 0)
  double optimizer_ms = 0;       ///< median optimizer time (rank 0): every rank does all of it
  double comm_busy_ms = 0;       ///< median time the gradient collectives ran
  double comm_wait_ms = 0;       ///< median exposed communication
  double loss_deviation = 0;     ///< largest |loss − chapter 4's| / chapter 4's over the steps
  std::size_t buckets = 0;       ///< buckets (rungs 3 and 4)
};

/// Every rung at every N of options.ranks on thread ranks (sgemm on one thread per rank), each
/// against chapter 4's Trainer run of the same options; prints a progress line per row.
std::vector<LadderRow> run_ladder_threads(const StageOptions& options);

/// Every rung on the MPI world `world` (every process calls it; rank 0's rows are the answer).
std::vector<LadderRow> run_ladder_mpi(const StageOptions& options, coll::Communicator& world);

/// Prints the ladder table and writes it as CSV and JSON (results folder).
void report_ladder(const StageOptions& options, const std::vector<LadderRow>& rows);

/// Chapter 4's one-device step time (sgemm on every core), for the header: ms per step.
double one_device_step_ms(const StageOptions& options);

/// Traces 3 steps of rung `rung` at N = 2 (lanes compute and comm per rank), writes the Chrome
/// JSON and a gnuplot table next to it, draws the picture if gnuplot is installed; returns the
/// share of communication hidden in the traced steps.
double trace_overlap(const StageOptions& options, Rung rung);

/// α-β of the thread ranks measured here, the step-time model against the ladder's measured
/// rows, and the model for 8 → 64 GPUs; prints the tables (and the tour lines if options.tour).
void scaling_analysis(const StageOptions& options, const std::vector<LadderRow>& rows);

/// The hierarchical all-reduce on 16 thread ranks in nodes of 4: bytes across nodes counted.
void hierarchical_bytes(const StageOptions& options);

/// The classifier on 4 thread ranks: no fault, a slow loader, a slow link, a straggler.
void bottleneck_demo(const StageOptions& options);

/// 256 mixed-length samples on 8 ranks: by count, length-aware (410) and longest-first, the
/// rank work predicted and measured (thread CPU time), max/mean.
void uneven_work(const StageOptions& options);

/// A rank that fails, the restart from the last checkpoint, the weights compared; the refusal
/// of mismatched ranks.
void stability_demo(const StageOptions& options);

/// ddp --backend mpi --cluster, every rank of `world` (the MPI world cluster.sh started; refused
/// with book::Error outside the cluster): flat against hierarchical all-reduce at the model's
/// gradient size and 4x it (time and cross-node bytes, counted and checked against the formulas);
/// the link's α-β from ping-pongs across and inside a node; DDP on one node (its ranks; every node
/// trains its own copy at once, as the nodes share this machine's cores) against the whole world
/// (flat, then hierarchical gradient sync) at the same global batch, with the scaling efficiency and
/// the α-β model's step time beside each; the world run's losses against the same run on thread
/// ranks. Rank 0 prints the tables and writes ch05_cluster_*.csv.
void cluster_analysis(const StageOptions& options, coll::Communicator& world);

/// The GPU cluster the scaling model extrapolates to: H100 SXM, 8 per node, NVLink inside and one
/// 400 Gb/s InfiniBand NIC per GPU across (figures and sources in the README).
Cluster h100_cluster(bool hierarchical);

/// A GPT of `d_model` x `layers` (vocab 50257, context 2048) on H100s at `global_batch`
/// sequences: BF16 gradients in 25 MiB buckets, 40% of the dense BF16 peak, AdamW on every GPU.
Workload gpt_workload(int d_model, int layers, double global_batch);

/// "3.1 MiB", "512 KiB".
std::string mib(double bytes);

}  // namespace book::ddp::stage
