// The stage's section "Prefix caching": a workload whose requests start with one of a few shared
// system prompts, replayed by the paged server with the prefix cache off and on.
#include <algorithm>
#include <iostream>

#include "chapters/10_paged_attention/stage.h"
#include "common/table.h"

namespace book::kv::stage {
namespace {

// The same workload replayed with prefix caching off and on.
struct PrefixRuns {
  ReplayResult off;
  ReplayResult on;
};

PrefixRuns run_prefix_replays(const StageOptions& o) {
  WorkloadOptions w;
  w.requests = o.requests;
  w.seed = o.seed + 1;
  w.max_len = o.max_len;
  w.system_prompts = o.system_prompts;
  w.system_prompt_tokens = o.system_prompt_tokens;
  const auto requests = make_workload(w);
  PagedReplayOptions paged;
  paged.budget_tokens = o.budget_tokens;
  paged.block_size = o.block_size;
  PrefixRuns runs;
  runs.off = replay_paged(requests, paged);
  paged.prefix_caching = true;
  runs.on = replay_paged(requests, paged);
  return runs;
}

// Hit rate, prefill tokens saved, memory saved by sharing, concurrency, steps.
Table prefix_table(const PrefixRuns& runs) {
  Table table({"prefix cache", "block hit rate", "prompt tokens not recomputed",
               "KV memory saved by sharing", "token states", "requests at once (mean)", "steps"});
  for (const ReplayResult* r : {&runs.off, &runs.on}) {
    const double hit_rate =
        r->queried_blocks ? static_cast<double>(r->hit_blocks) / r->queried_blocks : 0.0;
    table.add_row({r == &runs.on ? "on" : "off", r == &runs.on ? percent(hit_rate) : "-",
                   percent(static_cast<double>(r->cached_prompt_tokens) /
                           std::max<std::int64_t>(1, r->prompt_tokens)),
                   percent(r->sharing_saving), percent(r->memory.token_states),
                   fixed(r->mean_running, 1), std::to_string(r->steps)});
  }
  return table;
}

}  // namespace

TourLines prefix_section(const StageOptions& o) {
  const PrefixRuns prefix = run_prefix_replays(o);
  const Table table = prefix_table(prefix);
  table.write_csv(results_dir() + "/ch10_prefix_cache.csv");
  std::cout << "## Prefix caching: every request starts with one of " << o.system_prompts
            << " system prompts of " << o.system_prompt_tokens << " tokens\n\n"
            << table.markdown() << "\n";
  const double hit_rate =
      prefix.on.queried_blocks ? double(prefix.on.hit_blocks) / prefix.on.queried_blocks : 0.0;
  return "tour: 10 | prefix cache, " + std::to_string(o.system_prompts) + " shared " +
         std::to_string(o.system_prompt_tokens) + "-token system prompts | " + percent(hit_rate) +
         " block hits, " + percent(prefix.on.sharing_saving) +
         " of KV saved | shared prefixes stored once\n";
}

}  // namespace book::kv::stage
