/// @file
/// The serve_bench stage in named sections (serve_bench.cc calls them in order), one per README
/// section: the three peers and the latency-vs-rate curve, the sweep, the two P99 fixes, the
/// trained model through the engine, the wall clock. Each prints its tables, writes its CSV, JSON
/// and pictures under results/, and hands back its tour lines, which the stage prints at the end.
/// Below the sections, the pieces they share.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "chapters/10_paged_attention/workload.h"
#include "chapters/11_continuous_batching/arrivals.h"
#include "chapters/11_continuous_batching/metrics.h"
#include "chapters/11_continuous_batching/serving_workload.h"
#include "chapters/11_continuous_batching/simulate.h"
#include "common/table.h"

namespace book::serve::stage {

/// The stage's settings (flags).
struct StageOptions {
  bool tour = false;               ///< the tour's short run
  int requests = kStageRequests;   ///< requests in the workload
  double rate = 6;                 ///< requests per second (Poisson unless gamma_shape != 1)
  double gamma_shape = 1;          ///< arrival burstiness
  std::int64_t seed = kStageSeed;  ///< the lengths' seed (arrivals use seed + 1)
  int max_batch = 64;              ///< static batch / continuous max running
  int token_budget = 512;          ///< continuous tokens per step
  int kv_blocks = 4096;            ///< continuous KV blocks of 16 tokens
  double slo_ttft_ms = kStageSlo.ttft_ms;  ///< the SLO's time to first token
  double slo_tpot_ms = kStageSlo.tpot_ms;  ///< the SLO's time per output token
  std::string checkpoint;   ///< chapter 4's addition checkpoint (chapter 10's BUILD trains it)
  bool wall_clock = false;  ///< also time the real engine (stage_wall_clock.cc)
  int wall_requests = 512;  ///< its requests (eight static batches of 64)
  int wall_reps = 5;        ///< its interleaved repetitions
  int wall_threads = 0;     ///< its engine's threads (sgemm's; 0: every hardware thread)
};

/// Parses the stage's command line (the arguments after the program's name) with book::Flags;
/// checkpoint stays empty unless given. Throws book::UsageError for a bad command line
/// (--token-budget below --max-batch included), book::HelpRequested for --help.
StageOptions parse_options(const std::vector<std::string>& arguments);

/// The headline lines one section hands back for the tour, each ending in a newline.
using TourLines = std::string;

/// What the peers section ran that the latency-vs-rate section reuses, and its tour lines.
struct Peers {
  SimResult continuous;                  ///< continuous batching, offline (all requests at t = 0)
  SimResult fixed_batches;               ///< static batching, offline
  double continuous_requests_per_s = 0;  ///< the continuous run's capacity, requests/s
  TourLines tour;                        ///< offline capacity and online P99, static vs continuous
};

/// "Static against continuous batching": one at a time, static and continuous batching on one
/// workload, offline (capacity) and online at o.rate (latency).
Peers peers_section(const StageOptions& o);
/// "Static against continuous batching", its pictures: end-to-end latency against the request rate
/// (geometric rates past the continuous engine's capacity), and the rows of the first 600 steps of
/// both offline runs.
void rates_section(const StageOptions& o, const Peers& peers);

/// The token budgets the sweep tries; the P99 fixes run at the largest.
inline constexpr std::array<int, 2> kSweepBudgets = {512, 2048};
/// "Throughput against P99": max running × token budget, capacity and P99 at 90% of it. Tour line:
/// the first step up in max running that buys >= 20% capacity with a worse tail.
TourLines sweep_section(const StageOptions& o);
/// "The two P99 fixes": an SLO-driven token budget, and fast/slow lanes on two replicas, at 90% of
/// the capacity of twice o.max_batch running.
TourLines fixes_section(const StageOptions& o);
/// "Preemption by swap": chapter 4's trained addition model through the engine on a tight cache
/// (run_addition), preempting by recompute and by swap; the answers graded.
TourLines engine_section(const StageOptions& o);
/// "Wall clock" (--wall-clock): the real engine timed, continuous against static (run_wall_clock).
void wall_clock_section(const StageOptions& o);

/// The SLO of `o`: its TTFT and TPOT limits.
Slo stage_slo(const StageOptions& o);
/// a / b with two decimals and an "x": "12.71x".
std::string ratio(double a, double b);

/// What one preemption mode cost on the engine's run.
struct PreemptionCost {
  std::int64_t preemptions = 0;        ///< requests preempted
  std::int64_t dropped_positions = 0;  ///< K/V positions dropped and run again (recompute)
  std::int64_t rows = 0;               ///< model rows run in all (recomputation included)
  std::int64_t bytes_swapped = 0;      ///< K/V bytes copied to the host arena and back
  int steps = 0;                       ///< model steps
};

/// What serving the trained addition model through the engine gave.
struct EngineRun {
  int sums = 0;                  ///< sums served
  int correct = 0;               ///< answers right, served together (continuous batching)
  int equal_to_alone = 0;        ///< answers whose tokens equal those served one at a time
  int steps_continuous = 0;      ///< model steps, continuous batching
  int steps_one_at_a_time = 0;   ///< model steps, one request at a time
  int most_running = 0;          ///< the largest batch
  std::int64_t preemptions = 0;  ///< preemptions (the cache is tight on purpose)
  PreemptionCost recompute;      ///< the run above, preempting by recompute
  PreemptionCost swap;           ///< the same sums preempting by swap (a host arena of 64 blocks)
  std::int64_t swapped_out = 0;  ///< victims the swap run sent to the host arena
  std::int64_t swap_fallbacks = 0;  ///< victims the swap run recomputed (the arena full)
  int swap_equal_to_alone = 0;      ///< swap run's answers equal to those served alone
};

/// Serves `sums` held-out sums with chapter 4's trained addition model from `checkpoint`
/// through the engine (32 running, 64 rows per step, a cache of 40 blocks of 2 that forces
/// preemptions), once preempting by recompute and once by swap, and one at a time; grades the
/// answers. Throws book::Error if the checkpoint is
/// missing.
EngineRun run_addition(const std::string& checkpoint, int sums);

/// The largest batch either system of the wall-clock section runs; its KV cache holds that many
/// requests at full context, so neither side preempts.
inline constexpr int kWallMostRunning = 64;

/// One setting of the wall-clock section.
struct WallSetting {
  bool continuous = true;  ///< continuous batching, or static batches of max_running
  int max_running = 16;    ///< continuous: max running; static: the batch size
  int token_budget = 128;  ///< rows per step (static: enough for a batch's prompts in few steps)
};

/// What one run counted (not timed): the same in every repetition.
struct WallProfile {
  int steps = 0;          ///< model steps
  std::int64_t rows = 0;  ///< model rows: prompt positions and decoded tokens
};

/// One setting's runs, one per repetition.
struct WallSystem {
  WallSetting setting;                ///< what ran
  std::string name;                   ///< its row's label
  std::vector<ServingSummary> runs;   ///< milliseconds of a stopwatch
  std::vector<WallProfile> profiles;  ///< steps and rows, one per run
};

/// The wall-clock section: every setting timed once, then the best of each side repeated.
struct WallClock {
  int requests = 0;                   ///< requests per run
  int threads = 0;                    ///< the engine's threads
  int repetitions = 0;                ///< interleaved repetitions of the two best
  std::vector<WallSystem> selection;  ///< wall_settings(), one run each
  WallSystem continuous;              ///< the fastest continuous setting, `repetitions` runs
  WallSystem fixed_batches;           ///< the fastest static one (the peer), `repetitions` runs
  std::vector<double> ratios;         ///< continuous / static output tokens/s, per repetition
};

/// The wall-clock section's workload: scaled_lengths() to the model's 256-token context (chapter
/// 10's long-tailed lengths scaled by 1/8: prompt median 12.5, output median 25 tokens, 2% prompts
/// of 2 or 3 images of 72 tokens), vocabulary 64.
std::vector<kv::Request> wall_workload(int requests, std::uint64_t seed);
/// The settings timed: continuous with max running 16, 32, 64 × token budget 128, 512; static
/// batches of 8, 16, 32, 64 (512 rows per step).
std::vector<WallSetting> wall_settings();

/// Times the real engine (a random-weight model: 4 layers, width 128, context 256, vocabulary
/// 64) on `requests` requests of wall_workload(), all there at t = 0: after one warm-up run,
/// every setting of wall_settings() once; then the fastest continuous and the fastest static
/// setting `repetitions` times interleaved, the order alternating. Timings are wall-clock: take
/// them on a quiet machine.
/// The engine runs on `threads` threads (chapter 1's SgemmThreads; 0: all), restored after.
WallClock run_wall_clock(int requests, int repetitions, std::uint64_t seed, int threads);
/// The selection run, one row per setting (the best of each side marked), with the profile:
/// steps, rows per step, microseconds per row.
Table wall_selection_table(const WallClock& w);
/// The two best settings: medians over the repetitions, with the spread of tokens/s.
Table wall_clock_table(const WallClock& w);

/// The requests of `o` at `rate` requests/s (serving_workload.h's stage_workload: chapter 10's
/// default lengths, context 2048); rate 0: offline, every request at t = 0.
std::vector<TimedRequest> workload(const StageOptions& o, double rate);

/// One line per run: the system, throughput, goodput and latency percentiles.
Table summary_table();
/// Appends `result`'s summary under `slo` to `table`; returns the summary.
ServingSummary add_summary(Table& table, const std::string& label, const SimResult& result,
                           const Slo& slo);

/// The continuous options of `o` with this max running and budget (stage_continuous_options).
ContinuousOptions continuous_options(const StageOptions& o, int max_running, int token_budget);

/// Writes the step composition of the first `steps` steps of both runs (CSV) and plots them
/// (PNG, rows clipped at `top`) into `dir`; returns what it wrote, or says gnuplot is missing.
std::string plot_steps(const SimResult& continuous, const SimResult& fixed_batches, int steps,
                       int top, const std::string& dir);
/// Plots P99 and P50 end-to-end latency against the request rate (the `rates` table's CSV).
std::string plot_rates(const std::string& csv, const std::string& dir);

}  // namespace book::serve::stage
