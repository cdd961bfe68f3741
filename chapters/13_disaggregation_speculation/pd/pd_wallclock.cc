// The wall clock: the real engines on this machine. One prefill worker and one decode worker (one
// thread each) against one colocated engine on two threads, with and without chunked prefill,
// the same seeded Poisson workload for each. The model is chapter 4's GPT at chapter 11's
// wall-clock shape with random weights: the trained addition model has a context of 8 positions,
// too short for a prefill to cost anything; random weights cost the same time, and the tests
// check the split's tokens on the trained model.
#include <cmath>
#include <iostream>

#include "chapters/01_gemm_cpu/sgemm.h"
#include "chapters/10_paged_attention/served_model.h"
#include "chapters/13_disaggregation_speculation/pd/disaggregated.h"
#include "chapters/13_disaggregation_speculation/pd/pd_stage.h"
#include "common/rng.h"
#include "common/table.h"

namespace book::pd::stage {
namespace {

train::Config wall_config_of() {
  train::Config c;
  c.vocab_size = 64;
  c.context = 256;
  c.n_layer = 4;
  c.n_head = 4;
  c.d_model = 128;
  return c;
}

}  // namespace

std::unique_ptr<train::Model<float>> wall_model() { return kv::random_model(wall_config_of(), 5); }

// Prompts of 64..192 tokens (prefill-heavy, where interference shows), outputs of 24..48.
std::vector<TimedGeneration> wall_workload(int n, double rate, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<TimedGeneration> out(n);
  double t = 0;
  for (auto& g : out) {
    t += -std::log(1.0 - rng.uniform()) * 1000.0 / rate;
    g.arrival_ms = t;
    g.request.prompt.resize(rng.uniform_int(64, 192));
    for (int& token : g.request.prompt) token = static_cast<int>(rng.uniform_int(0, 63));
    g.request.max_tokens = static_cast<int>(rng.uniform_int(24, 48));
  }
  return out;
}

WorkerConfig wall_worker(int threads, bool chunked, int budget) {
  WorkerConfig w;
  w.kv_blocks = 16 * 16;  // 16 requests of the whole context: memory is not what is compared
  w.block_size = 16;
  w.scheduler = {16, budget, chunked};
  w.threads = threads;
  return w;
}

void run_wall_clock(const StageOptions& o, const std::string& dir) {
  auto model = wall_model();
  const serve::Slo slo{o.wall_slo_ttft_ms, o.wall_slo_tpot_ms};
  Table table({"rate/s", "system", "threads", "TTFT P50 ms", "TTFT P99 ms", "TPOT P50 ms",
               "TPOT P99 ms", "goodput req/s", "SLO met", "KV MB sent"});
  std::cout << "\n## Wall clock: the real engines on this machine\n\n"
            << o.wall_requests << " requests per run (prompts 64-192, outputs 24-48 tokens, "
            << "Poisson), chapter 4's GPT (4 layers, width 128, random weights), two threads per "
            << "system. SLO: TTFT <= " << fixed(slo.ttft_ms, 0)
            << " ms, TPOT <= " << fixed(slo.tpot_ms, 0) << " ms.\n\n";
  for (const double rate : o.wall_rates) {
    const auto requests = wall_workload(o.wall_requests, rate, o.seed);
    struct Row {
      std::string name;
      PdResult result;
    };
    std::vector<Row> rows;
    {
      const gemm::SgemmThreads two(2);
      rows.push_back({"colocated, chunked prefill (budget 64)",
                      serve_colocated(*model, requests, wall_worker(2, true, 64))});
      rows.push_back({"colocated, whole prompts (budget 256)",
                      serve_colocated(*model, requests, wall_worker(2, false, 256))});
    }
    const gemm::SgemmThreads one(1);  // each worker one thread: the same two in all
    // The control: one colocated engine on one thread. On a busy machine two threads that must
    // meet at every GEMM can be slower than one; this row tells that apart from interference.
    rows.push_back({"colocated, chunked prefill, 1 thread (control)",
                    serve_colocated(*model, requests, wall_worker(1, true, 64))});
    PdConfig split;
    split.prefill = wall_worker(1, true, 256);
    split.decode = wall_worker(1, true, 64);
    rows.push_back({"1 prefill + 1 decode worker", serve_disaggregated(*model, requests, split)});
    for (const Row& r : rows) {
      const serve::ServingSummary s = serve::summarize(r.result.timings, slo);
      std::int64_t kv = 0;
      for (const std::int64_t b : r.result.kv_bytes) kv += b;
      table.add_row({fixed(rate, 1), r.name, r.name.ends_with("(control)") ? "1" : "2",
                     fixed(s.ttft_p50, 1), fixed(s.ttft_p99, 1), fixed(s.tpot_p50, 2),
                     fixed(s.tpot_p99, 2), fixed(s.goodput, 2),
                     fixed(100 * s.slo_attained, 0) + "%", fixed(kv / 1e6, 1)});
      if (o.tour && r.name.starts_with("1 prefill"))
        std::cout << "tour: 13 | wall clock at " << fixed(rate, 1) << "/s, 1P+1D: TPOT P99 | "
                  << fixed(s.tpot_p99, 2) << " ms, TTFT P99 " << fixed(s.ttft_p99, 1)
                  << " ms | disaggregation protects decode's P99 TPOT\n";
      if (o.tour && r.name == "colocated, chunked prefill (budget 64)")
        std::cout << "tour: 13 | wall clock at " << fixed(rate, 1)
                  << "/s, colocated chunked, 2 threads: TPOT P99 | " << fixed(s.tpot_p99, 2)
                  << " ms, TTFT P99 " << fixed(s.ttft_p99, 1)
                  << " ms | prefill chunks stall the decodes beside them\n";
    }
  }
  std::cout << table.markdown() << "\n";
  table.write_csv(dir + "/ch13_pd_wallclock.csv");
  table.write_json(dir + "/ch13_pd_wallclock.json");
}

}  // namespace book::pd::stage
