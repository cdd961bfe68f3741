/// @file
/// The pd stage's two measurements: the real engines on the wall clock (pd_wallclock.cc) and the
/// 7B-scale sweep on chapter 11's simulated clock (pd_sweep.cc).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "chapters/11_continuous_batching/metrics.h"
#include "chapters/13_disaggregation_speculation/pd/disaggregated.h"

namespace book::pd::stage {

/// The stage's settings (pd.cc parses them).
struct StageOptions {
  bool tour = false;                             ///< the short run
  int wall_requests = 64;                        ///< requests per wall-clock run
  std::vector<double> wall_rates{30, 90};        ///< arrival rates on the wall clock, requests/s
  double wall_slo_ttft_ms = 100;                 ///< the wall clock's SLO
  double wall_slo_tpot_ms = 3;                   ///< the wall clock's SLO
  int sim_requests = 300;                        ///< requests per simulated cell
  std::vector<int> sim_prompts{128, 512, 2048};  ///< prompt lengths of the sweep
  std::vector<double> sim_rates{1, 2, 4, 8, 12, 16, 24, 32, 48};  ///< rates of the sweep
  double sim_slo_ttft_ms = 1000;                                  ///< the simulated SLO (7B)
  double sim_slo_tpot_ms = 25;                                    ///< the simulated SLO (7B)
  std::int64_t seed = 7;                                          ///< the workloads' seed
  std::string backend = "threads";  ///< the split's ranks: "threads" or "mpi" (under mpirun)
  int prefill = 1;                  ///< with mpi: ranks 0 .. prefill − 1 prefill, the rest decode
};

/// The wall clock's model: chapter 4's GPT, 4 layers of width 128, random weights (seed 5).
std::unique_ptr<train::Model<float>> wall_model();

/// The wall clock's seeded Poisson workload: `n` requests at `rate` per second, prompts of
/// 64..192 tokens, outputs of 24..48.
std::vector<TimedGeneration> wall_workload(int n, double rate, std::uint64_t seed);

/// A wall-clock worker: `threads` attention threads, chunked prefill or not, a token budget.
WorkerConfig wall_worker(int threads, bool chunked, int budget);

/// The wall clock with the split on MPI processes (pd.cc's --backend mpi, under mpirun): starts
/// MPI, runs the split on the world's ranks, then the colocated peer on rank 0 alone while the
/// others sleep; rank 0 prints the table. Throws book::Error on every rank, naming the counts,
/// if `o.prefill` leaves either pool empty.
void run_mpi_wall_clock(const StageOptions& o, int* argc, char*** argv);

/// Runs the wall-clock comparison; prints its table and tour lines, writes CSV/JSON to `dir`.
void run_wall_clock(const StageOptions& o, const std::string& dir);

/// Runs the simulated sweep; prints its tables, where colocation wins and tour lines, writes
/// CSV/JSON and the picture to `dir`.
void run_sweep(const StageOptions& o, const std::string& dir);

}  // namespace book::pd::stage
