// The serve_bench stage's command line, and the pieces its sections share: the workload, the
// summary table, the continuous engine's options.
#include <algorithm>

#include "chapters/11_continuous_batching/stage.h"
#include "common/flags.h"

namespace book::serve::stage {

StageOptions parse_options(const std::vector<std::string>& arguments) {
  std::vector<std::string> words = {"serve_bench"};
  words.insert(words.end(), arguments.begin(), arguments.end());
  std::vector<char*> argv;
  for (auto& word : words) argv.push_back(word.data());
  const int argc = static_cast<int>(argv.size());
  StageOptions o;
  Flags flags("serve_bench", "continuous batching vs static batching, throughput vs P99");
  flags.add("tour", &o.tour, "the tour's quick run (300 requests, fewer sweep points)");
  flags.add("requests", &o.requests, "requests in the workload").range(10, 100000);
  flags.add("rate", &o.rate, "requests per second offered to the online runs").range(0.01, 1e6);
  flags.add("gamma-shape", &o.gamma_shape, "arrival gaps ~ Gamma(shape): 1 is Poisson, < 1 bursty")
      .range(0.01, 100);
  flags.add("seed", &o.seed, "the workload's seed").range(0, 1000000000);
  flags.add("max-batch", &o.max_batch, "static batch size and continuous max running")
      .range(1, 4096);
  flags.add("token-budget", &o.token_budget, "continuous batching's tokens per step")
      .range(1, 1 << 20);
  flags.add("kv-blocks", &o.kv_blocks, "KV blocks of 16 tokens (4096 ≈ 32 GB at 7B)")
      .range(128, 1 << 24);
  flags.add("slo-ttft-ms", &o.slo_ttft_ms, "the SLO's time to first token").range(1, 1e9);
  flags.add("slo-tpot-ms", &o.slo_tpot_ms, "the SLO's time per output token").range(1, 1e9);
  flags.add("checkpoint", &o.checkpoint,
            "chapter 4's addition checkpoint (default: the one chapter 10's BUILD trains)");
  flags.add("wall-clock", &o.wall_clock,
            "also time the real engine (a random-weight model on this CPU), continuous vs static; "
            "run it on a quiet machine");
  flags.add("wall-requests", &o.wall_requests, "requests per wall-clock run").range(4, 4096);
  flags
      .add("wall-reps", &o.wall_reps,
           "interleaved repetitions of the best continuous and the best static setting")
      .range(1, 100);
  flags
      .add("wall-threads", &o.wall_threads,
           "threads of the wall-clock engine's layers (0: every hardware thread)")
      .range(0, 256);
  flags.parse(argc, argv.data());
  if (o.tour) o.requests = std::min(o.requests, 300);
  if (o.token_budget < o.max_batch)
    throw UsageError("--token-budget (" + std::to_string(o.token_budget) +
                     ") must be >= --max-batch (" + std::to_string(o.max_batch) +
                     "): every running request decodes each step");
  return o;
}

Slo stage_slo(const StageOptions& o) { return {o.slo_ttft_ms, o.slo_tpot_ms}; }

std::string ratio(double a, double b) { return fixed(a / b, 2) + "x"; }

std::vector<TimedRequest> workload(const StageOptions& o, double rate) {
  return stage_workload(o.requests, o.seed, rate, o.gamma_shape);
}

Table summary_table() {
  return Table({"system", "req/s", "out tok/s", "goodput req/s", "SLO met", "TTFT P50 ms",
                "TTFT P99 ms", "TPOT P50 ms", "TPOT P99 ms", "ITL P99 ms", "E2E P50 s", "E2E P99 s",
                "rows run / useful", "preempted"});
}

ServingSummary add_summary(Table& table, const std::string& label, const SimResult& result,
                           const Slo& slo) {
  const ServingSummary s = summarize(result.timings, slo);
  table.add_row({label, fixed(s.requests_per_s, 2), fixed(s.tokens_per_s, 0), fixed(s.goodput, 2),
                 fixed(100 * s.slo_attained, 1) + "%", fixed(s.ttft_p50, 0), fixed(s.ttft_p99, 0),
                 fixed(s.tpot_p50, 1), fixed(s.tpot_p99, 1),
                 fixed(inter_token_percentile(result, 99), 1), fixed(s.e2e_p50 / 1000, 2),
                 fixed(s.e2e_p99 / 1000, 2),
                 fixed(static_cast<double>(result.rows) / result.useful_rows, 3),
                 std::to_string(result.preemptions)});
  return s;
}

ContinuousOptions continuous_options(const StageOptions& o, int max_running, int token_budget) {
  return stage_continuous_options(max_running, token_budget, o.kv_blocks);
}

}  // namespace book::serve::stage
