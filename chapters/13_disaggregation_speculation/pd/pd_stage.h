/// @file
/// The pd stage's two measurements: the real engines on the wall clock (pd_wallclock.cc) and the
/// 7B-scale sweep on chapter 11's simulated clock (pd_sweep.cc).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "chapters/11_continuous_batching/metrics.h"

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
};

/// Runs the wall-clock comparison; prints its table and tour lines, writes CSV/JSON to `dir`.
void run_wall_clock(const StageOptions& o, const std::string& dir);

/// Runs the simulated sweep; prints its tables, where colocation wins and tour lines, writes
/// CSV/JSON and the picture to `dir`.
void run_sweep(const StageOptions& o, const std::string& dir);

}  // namespace book::pd::stage
