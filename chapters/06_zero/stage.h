/// @file
/// The zero stage (`bazel run //chapters/06_zero:zero`) in named steps: its command line, the run
/// it trains at each stage and N, and the rows it measures.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "chapters/06_zero/zero_options.h"
#include "common/dtype.h"

namespace book::zero::stage {

/// The stage's command line, checked.
struct StageOptions {
  bool tour = false;                      ///< the tour's short run
  std::vector<int> ranks = {1, 2, 3, 4};  ///< N, thread ranks
  std::vector<Stage> stages = {Stage::kDdp, Stage::kZero1, Stage::kZero2,
                               Stage::kZero3};  ///< measured stages
  DType precision = DType::kBF16;  ///< training precision (the paper's formulas: bf16 or f16)
  int steps = 3;                   ///< optimizer steps per stage and N
  int layers = 2;                  ///< transformer blocks
  int d_model = 32;                ///< model width
  int heads = 2;                   ///< attention heads
  int micro_batch = 12;            ///< global micro-batch (every N must divide it)
  int bucket_kib = 16;             ///< bucket cap, KiB of FP32 gradient
  double psi = 7.5e9;              ///< Ψ of the formula table (the ZeRO paper's 7.5B)
  int paper_ranks = 64;            ///< N of the formula table (the paper's 64)
  bool trace = false;              ///< also draw ZeRO-3's per-rank trace (trace_zero3)
};

/// Parses and checks the command line: unknown stages, a precision
/// that is not a training precision, an N that does not divide the micro-batch, are each a
/// book::Error saying what to pass instead. `--tour` defaults to N = 2, 4 and 2 steps.
StageOptions parse_stage_options(int argc, const char* const* argv);

/// The ZeroOptions of one measured run.
ZeroOptions run_options(const StageOptions& options, Stage stage);

/// One measured (stage, N): the largest rank's bytes (the one that sets the memory a job needs)
/// and rank 0's traffic, against the formulas.
struct Row {
  Stage stage = Stage::kDdp;          ///< the stage
  int ranks = 1;                      ///< N
  std::uint64_t parameters = 0;       ///< Ψ
  std::uint64_t owned = 0;            ///< the largest S_r
  std::uint64_t measured = 0;         ///< model-state bytes of the largest rank, by the tracker
  std::uint64_t formula = 0;          ///< sharding.h's exact formula for that rank
  double paper = 0;                   ///< the paper's real-valued formula, bytes
  std::uint64_t gradient_peak = 0;    ///< the tracker's peak of gradient bytes, largest rank
  std::uint64_t buffers = 0;  ///< peak communication buffers (ZeRO-3: the gathers), largest rank
  std::uint64_t traffic = 0;          ///< bytes rank 0 sent per step (last step), by the counters
  std::uint64_t traffic_formula = 0;  ///< traffic_per_step for rank 0
  std::int64_t collectives = 0;       ///< collectives per step (rank 0)
  double loss_deviation = 0;          ///< largest relative deviation from chapter 5's DDP's losses
};

/// Trains options.steps steps of `stage` on `n` thread ranks and of chapter 5's DDP (rung
/// no-sync, the same buckets), and measures the row.
Row measure(const StageOptions& options, Stage stage, int n);

/// Runs 2 steps of ZeRO-3 on 2 thread ranks (with or without prefetch) under a book::Trace and
/// writes it under results_dir() as ch06_zero3_trace_<prefetch|no-prefetch>.json (Perfetto), .tsv
/// and, with gnuplot, .svg of the second step: per rank a compute lane (forward, backward, waits,
/// optimizer) and a comm lane (all-gathers, reduce-scatters). A picture, not a measurement.
void trace_zero3(const StageOptions& options, bool prefetch);

}  // namespace book::zero::stage
