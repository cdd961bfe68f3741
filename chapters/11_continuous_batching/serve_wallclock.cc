// The stage's wall-clock section (--wall-clock): the real engine, timed. A random-weight model of
// chapter 4's shape serves one seeded workload, every request there at t = 0, by continuous
// batching and by static batching (the same engine given a batch at a time, the next batch only
// when the whole batch finished), interleaved, repeated; each token's time is taken as it is
// sampled. The simulated clock stays the chapter's main number; this checks its direction on a
// real (CPU) engine.
#include <chrono>
#include <map>

#include "chapters/10_paged_attention/served_model.h"
#include "chapters/11_continuous_batching/engine.h"
#include "chapters/11_continuous_batching/serve_report.h"
#include "common/rng.h"
#include "common/timer.h"

namespace book::serve::stage {
namespace {

constexpr int kBatch = 16, kBudget = 128, kBlockSize = 16, kBlocks = 256;

train::Config wall_config() {
  train::Config c;
  c.vocab_size = 64;
  c.context = 256;
  c.n_layer = 4;
  c.n_head = 4;
  c.d_model = 128;
  return c;
}

// Prompts of 8 to 96 tokens; outputs mostly short (4 to 24), one in five long (64 to 120).
std::vector<GenerationRequest> wall_requests(int n, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<GenerationRequest> out(n);
  for (auto& r : out) {
    r.prompt.resize(rng.uniform_int(8, 96));
    for (int& t : r.prompt) t = static_cast<int>(rng.uniform_int(0, 63));
    r.max_tokens =
        static_cast<int>(rng.uniform() < 0.8 ? rng.uniform_int(4, 24) : rng.uniform_int(64, 120));
  }
  return out;
}

// One timed run; `batch` = 0: continuous (everything submitted at once), else static batches.
ServingSummary timed_run(train::Model<float>& model, const std::vector<GenerationRequest>& requests,
                         int batch) {
  kv::PagedKvCache cache(kv::kv_shape_of(model.config()), kBlocks, kBlockSize);
  kv::ModelRunner runner(model, cache, kBudget);
  kv::BlockManager blocks(kBlocks, kBlockSize, /*prefix_caching=*/false);
  Engine engine(runner, blocks, {kBatch, kBudget, true});
  std::vector<RequestTiming> timings(requests.size());
  std::map<RequestId, std::size_t> index;
  const auto start = std::chrono::steady_clock::now();
  engine.on_token([&](RequestId id, int, bool last) {
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    RequestTiming& t = timings[index.at(id)];
    if (t.output_tokens++ == 0) t.first_token_ms = ms;
    if (last) t.finish_ms = ms;
  });
  const std::size_t step = batch == 0 ? requests.size() : static_cast<std::size_t>(batch);
  for (std::size_t next = 0; next < requests.size();) {
    for (const std::size_t end = std::min(requests.size(), next + step); next < end; ++next) {
      index[engine.submit(requests[next])] = next;
      timings[next].prompt_tokens = static_cast<int>(requests[next].prompt.size());
      timings[next].output_tokens = 0;
    }
    engine.run();  // static: the next batch starts when this one's longest member finished
  }
  return summarize(timings, Slo{});
}

}  // namespace

WallClock run_wall_clock(int requests, int repetitions, std::uint64_t seed) {
  auto model = kv::random_model(wall_config(), seed);
  const auto work = wall_requests(requests, seed);
  WallClock w;
  w.requests = requests;
  w.repetitions = repetitions;
  timed_run(*model, work, 0);  // warm-up: caches, page faults
  for (int r = 0; r < repetitions; ++r) {
    // Interleaved, the order alternating, so that a slow stretch of the machine hits both.
    const bool continuous_first = r % 2 == 0;
    const ServingSummary a = timed_run(*model, work, continuous_first ? 0 : kBatch);
    const ServingSummary b = timed_run(*model, work, continuous_first ? kBatch : 0);
    w.continuous.push_back(continuous_first ? a : b);
    w.fixed_batches.push_back(continuous_first ? b : a);
    w.ratios.push_back(w.continuous.back().tokens_per_s / w.fixed_batches.back().tokens_per_s);
  }
  return w;
}

Table wall_clock_table(const WallClock& w) {
  Table table({"system", "out tok/s (median)", "spread", "TTFT P50 ms", "TTFT P99 ms",
               "TPOT P50 ms", "TPOT P99 ms"});
  const auto row = [&](const std::string& name, const std::vector<ServingSummary>& runs) {
    std::vector<double> tps, ttft50, ttft99, tpot50, tpot99;
    for (const auto& s : runs) {
      tps.push_back(s.tokens_per_s);
      ttft50.push_back(s.ttft_p50);
      ttft99.push_back(s.ttft_p99);
      tpot50.push_back(s.tpot_p50);
      tpot99.push_back(s.tpot_p99);
    }
    table.add_row({name, fixed(median(tps), 0), fixed(100 * relative_spread(tps), 1) + "%",
                   fixed(median(ttft50), 1), fixed(median(ttft99), 1), fixed(median(tpot50), 2),
                   fixed(median(tpot99), 2)});
  };
  row("continuous, max " + std::to_string(kBatch) + " running, " + std::to_string(kBudget) +
          " tok/step",
      w.continuous);
  row("static, batches of " + std::to_string(kBatch), w.fixed_batches);
  return table;
}

}  // namespace book::serve::stage
