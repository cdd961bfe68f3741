// The stage's section "Wall clock" (--wall-clock): the real engine, timed. A random-weight model of
// chapter 4's shape serves one seeded long-tailed workload, every request there at t = 0, by
// continuous batching and by static batching (the same engine given a batch at a time, the next
// batch only when the whole batch finished), each at several batch sizes; every repetition runs
// every setting once, the order rotating, and each token's time is taken as it is sampled. The
// simulated clock stays the chapter's main number; this measures the same comparison on a real
// (CPU) engine, each side at its best setting.
#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>
#include <thread>

#include "chapters/01_gemm_cpu/sgemm.h"
#include "chapters/10_paged_attention/served_model.h"
#include "chapters/10_paged_attention/workload.h"
#include "chapters/11_continuous_batching/engine.h"
#include "chapters/11_continuous_batching/stage.h"
#include "common/timer.h"

namespace book::serve::stage {
namespace {

constexpr int kContext = 256, kBlockSize = 16;
// The runner's rows per step: the largest token budget either system gets.
constexpr int kMaxRows = 512;

train::Config wall_config() {
  train::Config c;
  c.vocab_size = 64;
  c.context = kContext;
  c.n_layer = 4;
  c.n_head = 4;
  c.d_model = 128;
  return c;
}

// One run's counters, for the profile: where the time went.
struct TimedRun {
  ServingSummary summary;
  int steps = 0;
  std::int64_t rows = 0;  // model rows run: prompt positions and decoded tokens
};

// One timed run of `s` over `requests` (the KV cache holds every request of the largest batch at
// full context, so neither system preempts: memory is not what is compared here).
TimedRun timed_run(train::Model<float>& model, const std::vector<GenerationRequest>& requests,
                   const WallSetting& s) {
  const int blocks = kWallMostRunning * (kContext / kBlockSize);
  kv::PagedKvCache cache(kv::kv_shape_of(model.config()), blocks, kBlockSize);
  kv::ModelRunner runner(model, cache, kMaxRows);
  kv::BlockManager block_manager(blocks, kBlockSize, /*prefix_caching=*/false);
  Engine engine(runner, block_manager, {s.max_running, s.token_budget, true});
  std::vector<RequestTiming> timings(requests.size());
  std::map<RequestId, std::size_t> index;
  TimedRun run;
  const auto start = std::chrono::steady_clock::now();
  engine.on_token([&](RequestId id, int, bool last) {
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    RequestTiming& t = timings[index.at(id)];
    if (t.output_tokens++ == 0) t.first_token_ms = ms;
    if (last) t.finish_ms = ms;
  });
  // Continuous: everything submitted at once, the engine refills a freed slot at the next step.
  // Static: a batch at a time; the engine still retires a finished member at once (it runs no
  // padding rows), so static batching here is at its best: it loses only the slots nobody refills.
  const std::size_t batch =
      s.continuous ? requests.size() : static_cast<std::size_t>(s.max_running);
  for (std::size_t next = 0; next < requests.size();) {
    for (const std::size_t end = std::min(requests.size(), next + batch); next < end; ++next) {
      index[engine.submit(requests[next])] = next;
      timings[next].prompt_tokens = static_cast<int>(requests[next].prompt.size());
      timings[next].output_tokens = 0;
    }
    while (engine.has_work()) {
      const StepRecord step = engine.step();
      run.rows += step.decode_rows + step.prefill_rows;
    }
    engine.take_finished();
  }
  run.steps = engine.steps();
  run.summary = summarize(timings, Slo{});
  return run;
}

std::string setting_name(const WallSetting& s) {
  return s.continuous ? "continuous, max " + std::to_string(s.max_running) + " running, " +
                            std::to_string(s.token_budget) + " tok/step"
                      : "static, batches of " + std::to_string(s.max_running);
}

}  // namespace

std::vector<kv::Request> wall_workload(int requests, std::uint64_t seed) {
  return kv::make_workload(scaled_lengths(requests, seed, kContext, wall_config().vocab_size));
}

std::vector<WallSetting> wall_settings() {
  std::vector<WallSetting> out;
  for (const int running : {16, 32, 64})
    for (const int budget : {128, 512}) out.push_back({true, running, budget});
  for (const int batch : {8, 16, 32, 64}) out.push_back({false, batch, kMaxRows});
  return out;
}

WallClock run_wall_clock(int requests, int repetitions, std::uint64_t seed, int threads) {
  const gemm::SgemmThreads scope(threads);
  auto model = kv::random_model(wall_config(), seed);
  std::vector<GenerationRequest> work;
  for (const kv::Request& r : wall_workload(requests, seed)) {
    GenerationRequest g;
    g.prompt = r.prompt;
    g.max_tokens = r.output_tokens;  // no stop tokens: every request runs to its length
    work.push_back(std::move(g));
  }
  WallClock w;
  w.requests = requests;
  w.threads =
      threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  w.repetitions = repetitions;
  const auto time_into = [&](WallSystem& system) {
    const TimedRun run = timed_run(*model, work, system.setting);
    system.runs.push_back(run.summary);
    system.profiles.push_back({run.steps, run.rows});
  };
  timed_run(*model, work, wall_settings().front());  // warm-up: caches, page faults
  // The selection: every setting once; each side's fastest is its best setting. The settings
  // differ by whole factors in steps run, so one run each tells them apart.
  for (const WallSetting& s : wall_settings()) {
    w.selection.push_back({s, setting_name(s), {}, {}});
    time_into(w.selection.back());
  }
  const auto best = [&](bool continuous) {
    const WallSystem* pick = nullptr;
    for (const WallSystem& system : w.selection)
      if (system.setting.continuous == continuous &&
          (!pick || system.runs[0].tokens_per_s > pick->runs[0].tokens_per_s))
        pick = &system;
    return WallSystem{pick->setting, pick->name, {}, {}};
  };
  w.continuous = best(true);
  w.fixed_batches = best(false);
  for (int r = 0; r < repetitions; ++r) {
    // Interleaved, the order alternating, so that a slow stretch of the machine hits both.
    const bool continuous_first = r % 2 == 0;
    time_into(continuous_first ? w.continuous : w.fixed_batches);
    time_into(continuous_first ? w.fixed_batches : w.continuous);
    w.ratios.push_back(w.continuous.runs.back().tokens_per_s /
                       w.fixed_batches.runs.back().tokens_per_s);
  }
  return w;
}

namespace {

// A row of medians over `system`'s runs, with its counted profile.
std::vector<std::string> wall_row(const WallSystem& system, const std::string& name) {
  std::vector<double> tps, ttft50, ttft99, tpot50, tpot99, us_per_row;
  for (std::size_t r = 0; r < system.runs.size(); ++r) {
    const ServingSummary& s = system.runs[r];
    tps.push_back(s.tokens_per_s);
    ttft50.push_back(s.ttft_p50);
    ttft99.push_back(s.ttft_p99);
    tpot50.push_back(s.tpot_p50);
    tpot99.push_back(s.tpot_p99);
    us_per_row.push_back(1e6 * s.duration_s / static_cast<double>(system.profiles[r].rows));
  }
  const WallProfile& p = system.profiles.front();  // counted: the same in every run
  return {name,
          fixed(median(tps), 0),
          fixed(100 * relative_spread(tps), 1) + "%",
          fixed(median(ttft50), 1),
          fixed(median(ttft99), 1),
          fixed(median(tpot50), 2),
          fixed(median(tpot99), 2),
          std::to_string(p.steps),
          fixed(static_cast<double>(p.rows) / p.steps, 1),
          fixed(median(us_per_row), 1)};
}

Table wall_table() {
  return Table({"system", "out tok/s (median)", "spread", "TTFT P50 ms", "TTFT P99 ms",
                "TPOT P50 ms", "TPOT P99 ms", "steps", "rows/step", "µs/row"});
}

}  // namespace

Table wall_selection_table(const WallClock& w) {
  Table table = wall_table();
  for (const WallSystem& system : w.selection)
    table.add_row(wall_row(system, system.name + (system.name == w.continuous.name ||
                                                          system.name == w.fixed_batches.name
                                                      ? " (best)"
                                                      : "")));
  return table;
}

Table wall_clock_table(const WallClock& w) {
  Table table = wall_table();
  table.add_row(wall_row(w.continuous, w.continuous.name));
  table.add_row(wall_row(w.fixed_batches, w.fixed_batches.name));
  return table;
}

void wall_clock_section(const StageOptions& o) {
  std::cout << "## Wall clock: the real engine on this machine\n\n"
            << "Timing " << o.wall_reps << " interleaved repetitions of " << o.wall_requests
            << " requests (all at t = 0; chapter 10's long-tailed lengths scaled by 1/8 to the "
               "model's 256-token context): every setting once, then the best of each side ..."
            << std::endl;
  const WallClock w = run_wall_clock(o.wall_requests, o.wall_reps,
                                     static_cast<std::uint64_t>(o.seed), o.wall_threads);
  const Table selection = wall_selection_table(w);
  const Table table = wall_clock_table(w);
  std::cout << "\n### Every setting once (the selection)\n\n"
            << selection.markdown() << "\n### The best of each side, " << w.repetitions
            << " interleaved repetitions\n\n"
            << table.markdown() << "\nBest continuous: " << w.continuous.name
            << "; the peer, static batching at its best: " << w.fixed_batches.name
            << ". Continuous / static output tokens/s: " << ratio(median(w.ratios), 1)
            << " (median of the per-repetition ratios; spread "
            << fixed(100 * relative_spread(w.ratios), 1) << "%; range "
            << ratio(*std::min_element(w.ratios.begin(), w.ratios.end()), 1) << " to "
            << ratio(*std::max_element(w.ratios.begin(), w.ratios.end()), 1)
            << "). Medians of the repetitions; a stopwatch on this machine, not the cost "
               "model. Steps and rows are counted; µs/row is a run's time over its rows; the "
               "engine ran on "
            << w.threads << " thread(s).\n\n";
  const std::string dir = results_dir();
  selection.write_csv(dir + "/ch11_wall_clock_selection.csv");
  table.write_csv(dir + "/ch11_wall_clock.csv");
  table.write_json(dir + "/ch11_wall_clock.json");
}

}  // namespace book::serve::stage
