// The stage's section "Contiguous against paged": one seeded workload replayed into a fixed KV
// budget by contiguous servers (max-length, power-of-two and exact reservations: the vLLM paper's
// Orca baselines) and by the paged BlockManager, and the paged server at several block sizes.
#include <algorithm>
#include <iostream>
#include <numeric>

#include "chapters/10_paged_attention/stage.h"
#include "common/table.h"

namespace book::kv::stage {

std::string percent(double fraction) { return fixed(100 * fraction, 1) + "%"; }

namespace {

std::string describe_workload(const std::vector<Request>& requests) {
  std::vector<int> prompts, outputs;
  int multimodal = 0;
  for (const Request& r : requests) {
    prompts.push_back(static_cast<int>(r.prompt.size()));
    outputs.push_back(r.output_tokens);
    multimodal += r.multimodal;
  }
  auto summary = [](std::vector<int> v) {
    std::sort(v.begin(), v.end());
    const double mean = std::accumulate(v.begin(), v.end(), 0.0) / v.size();
    return "median " + std::to_string(v[v.size() / 2]) + ", mean " + fixed(mean, 0) + ", p99 " +
           std::to_string(v[v.size() * 99 / 100]) + ", max " + std::to_string(v.back());
  };
  return std::to_string(requests.size()) + " requests; prompt tokens " + summary(prompts) +
         "; output tokens " + summary(outputs) + "; " + std::to_string(multimodal) +
         " multimodal prompts (2-3 images of 576 tokens)";
}

Table waste_table(const ReplayRuns& runs) {
  Table table({"system", "token states", "reserved for later tokens", "never used (internal)",
               "unallocated (external, free)", "requests at once (mean)", "max", "steps",
               "preemptions", "waste per request (mean)", "(max)"});
  for (const ReplayResult& r : runs.systems)
    table.add_row({r.system, percent(r.memory.token_states), percent(r.memory.reserved),
                   percent(r.memory.internal), percent(r.memory.unallocated),
                   fixed(r.mean_running, 1), std::to_string(r.max_running), std::to_string(r.steps),
                   std::to_string(r.preemptions), fixed(r.mean_waste_per_sequence, 1),
                   std::to_string(r.max_waste_per_sequence)});
  return table;
}

Table block_size_table(const ReplayRuns& runs) {
  Table table({"block size", "token states", "waste per request (mean)", "(max)",
               "requests at once (mean)", "steps", "preemptions"});
  for (const ReplayResult& r : runs.block_sizes)
    table.add_row({r.system.substr(r.system.rfind(' ') + 1), percent(r.memory.token_states),
                   fixed(r.mean_waste_per_sequence, 1), std::to_string(r.max_waste_per_sequence),
                   fixed(r.mean_running, 1), std::to_string(r.steps),
                   std::to_string(r.preemptions)});
  return table;
}

}  // namespace

ReplayRuns run_replays(const StageOptions& o) {
  WorkloadOptions w;
  w.requests = o.requests;
  w.seed = o.seed;
  w.max_len = o.max_len;
  ReplayRuns runs;
  runs.requests = make_workload(w);
  for (const Reservation r :
       {Reservation::kMaxLength, Reservation::kPowerOfTwo, Reservation::kExact})
    runs.systems.push_back(replay_contiguous(runs.requests, o.budget_tokens, o.max_len, r));
  PagedReplayOptions paged;
  paged.budget_tokens = o.budget_tokens;
  paged.block_size = o.block_size;
  runs.systems.push_back(replay_paged(runs.requests, paged));
  if (!o.tour)
    for (const int bs : {1, 4, 16, 64, 256}) {
      paged.block_size = bs;
      runs.block_sizes.push_back(replay_paged(runs.requests, paged));
    }
  return runs;
}

TourLines paging_section(const StageOptions& o, const ReplayRuns& runs) {
  const ReplayResult &paged = runs.paged(), &max = runs.max_length();
  std::cout << "## Memory replay: " << o.requests << " requests into " << o.budget_tokens
            << " KV slots, context " << o.max_len << "\n\n"
            << describe_workload(runs.requests) << ". Fractions of the budget, averaged over the "
            << "steps with requests waiting (memory under pressure).\n\n"
            << waste_table(runs).markdown() << "\n";
  // Without a request waiting there is no "under load" to average: the ratios would be 0 / 0.
  const std::string idle = without_pressure(runs.systems);
  if (!idle.empty())
    std::cout << idle << "\n\n";
  else
    std::cout << "requests at once: paged " << fixed(paged.mean_running, 1)
              << " vs contiguous max-length " << fixed(max.mean_running, 1) << " = "
              << fixed(paged.mean_running / max.mean_running, 2) << "x (vs power of two "
              << fixed(paged.mean_running / runs.systems[1].mean_running, 2) << "x, vs exact "
              << fixed(paged.mean_running / runs.systems[2].mean_running, 2)
              << "x); the workload took " << paged.steps << " steps paged, " << max.steps
              << " contiguous (max length)\n\n";
  const std::string dir = results_dir();
  waste_table(runs).write_csv(dir + "/ch10_replay.csv");
  waste_table(runs).write_json(dir + "/ch10_replay.json");
  if (!runs.block_sizes.empty()) {
    std::cout
        << "### Block size: smaller blocks waste less, larger ones mean fewer, longer reads\n\n"
        << block_size_table(runs).markdown() << "\n";
    block_size_table(runs).write_csv(dir + "/ch10_block_sizes.csv");
  }

  const std::string no_load = "none: no request waited (budget too large)";
  const std::string kv_memory = idle.empty() ? percent(paged.memory.token_states) + " vs " +
                                                   percent(max.memory.token_states) + " / " +
                                                   percent(runs.systems[2].memory.token_states)
                                             : no_load;
  const std::string at_once =
      idle.empty() ? fixed(paged.mean_running, 1) + " vs " + fixed(max.mean_running, 1) + " = " +
                         fixed(paged.mean_running / max.mean_running, 1) + "x"
                   : no_load;
  const std::string blocks = std::to_string(o.block_size);
  return "tour: 10 | KV memory holding tokens under load, paged (blocks of " + blocks +
         ") vs contiguous (max length / exact) | " + kv_memory +
         " | vLLM: 96.3% paged vs 20.4-38.2% reserved\n"
         "tour: 10 | requests at once in the same KV budget, paged vs contiguous max length | " +
         at_once + " | paging fits 3-4x more requests\n" +
         "tour: 10 | waste per request, paged (blocks of " + blocks + ") | mean " +
         fixed(paged.mean_waste_per_sequence, 1) + ", max " +
         std::to_string(paged.max_waste_per_sequence) + " slots | less than one block\n";
}

}  // namespace book::kv::stage
