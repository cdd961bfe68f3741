// bazel run -c opt //chapters/10_paged_attention:kv [-- --tour] [--requests N] [--budget-tokens N]
//     [--max-len N] [--block-size N] [--seed N] [--system-prompts N] [--system-prompt-tokens N]
//     [--checkpoint FILE]   (--help lists them)
//
// The KV cache measured: what a token costs (counted), a seeded long-tailed workload replayed into
// a fixed KV budget by contiguous servers (max-length, power-of-two and exact reservations: the
// vLLM paper's Orca baselines) and by the paged BlockManager (where the memory went, how many
// requests fit at once, waste per request, block sizes), prefix caching on shared system prompts,
// copy-on-write for parallel sampling, and chapter 4's trained addition model decoded with the
// paged cache (graded). Writes CSV/JSON, the block-table pictures and the memory plot under
// results/. The steps are in kv_report.h, in the order body() calls them.
#include <iostream>
#include <string>

#include "chapters/10_paged_attention/attention_cpu.h"
#include "chapters/10_paged_attention/kv_report.h"
#include "chapters/10_paged_attention/served_model.h"
#include "common/machine_load.h"
#include "common/main.h"
#include "common/table.h"

namespace {

using namespace book::kv;
using namespace book::kv::stage;

StageOptions parse(int argc, char** argv) {
  StageOptions o = parse_stage_options(argc, argv);
  if (o.checkpoint.empty())
    o.checkpoint = runfile("chapters/10_paged_attention/addition_checkpoint.bin", argv[0]);
  return o;
}

std::string pct(double fraction) { return book::fixed(100 * fraction, 1) + "%"; }

// What the tour ran, next to the chapter's default run (the README's tables).
void print_tour_config(const StageOptions& o) {
  std::cout << "tour-config: 10 | kv --tour: " << o.requests << " requests replayed into "
            << o.budget_tokens << " KV slots, blocks of " << o.block_size
            << ", no block-size sweep, 200 sums decoded and a 64 + 64-token long decode (the "
               "chapter's run, `kv` without --tour: the same replay, the sweep over blocks of 1 "
               "to 256, 1000 sums and a 128 + 256-token long decode)\n";
}

int body(int argc, char** argv) {
  const StageOptions o = parse(argc, argv);
  book::print_machine_load();
  if (o.tour) print_tour_config(o);
  const std::string dir = book::results_dir();
  std::cout << "# Chapter 10: the KV cache and paged attention\n\n"
            << "## What one token costs: 2 · layers · KV heads · head_dim · element size\n\n"
            << kv_cost_table().markdown() << "\n";

  const ReplayRuns runs = run_replays(o);
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
    std::cout << "requests at once: paged " << book::fixed(paged.mean_running, 1)
              << " vs contiguous max-length " << book::fixed(max.mean_running, 1) << " = "
              << book::fixed(paged.mean_running / max.mean_running, 2) << "x (vs power of two "
              << book::fixed(paged.mean_running / runs.systems[1].mean_running, 2) << "x, vs exact "
              << book::fixed(paged.mean_running / runs.systems[2].mean_running, 2)
              << "x); the workload took " << paged.steps << " steps paged, " << max.steps
              << " contiguous (max length)\n\n";
  waste_table(runs).write_csv(dir + "/ch10_replay.csv");
  waste_table(runs).write_json(dir + "/ch10_replay.json");
  if (!runs.block_sizes.empty()) {
    std::cout
        << "### Block size: smaller blocks waste less, larger ones mean fewer, longer reads\n\n"
        << block_size_table(runs).markdown() << "\n";
    block_size_table(runs).write_csv(dir + "/ch10_block_sizes.csv");
  }

  const PrefixRuns prefix = run_prefix_replays(o);
  std::cout << "## Prefix caching: every request starts with one of " << o.system_prompts
            << " system prompts of " << o.system_prompt_tokens << " tokens\n\n"
            << prefix_table(prefix).markdown() << "\n";
  prefix_table(prefix).write_csv(dir + "/ch10_prefix_cache.csv");
  const SamplingRun sampling = run_parallel_sampling(o.block_size);
  std::cout << "## Copy-on-write: parallel sampling, n = " << sampling.samples << " from one "
            << sampling.prompt_tokens << "-token prompt, " << sampling.new_tokens
            << " new tokens each\n\n"
            << sampling.shared_blocks << " blocks in use with forks vs " << sampling.unshared_blocks
            << " if each sample copied the prompt ("
            << pct(1.0 - double(sampling.shared_blocks) / sampling.unshared_blocks) << " saved); "
            << sampling.copies << " blocks copied on write\n\n";

  std::cout << "## Decoding with the KV cache\n\n";
  const DecodeRun decode = run_decoding(o);
  const bool own =
      decode.checkpoint.ends_with("chapters/10_paged_attention/addition_checkpoint.bin");
  std::cout << "trained addition model ("
            << (own ? "chapter 4's tour run, trained by this chapter's BUILD" : decode.checkpoint)
            << "): " << decode.correct << " of " << decode.sums
            << " held-out sums right with the paged cache; answers "
            << (decode.paged_equals_full ? "equal" : "DIFFER FROM")
            << " the full forward pass's and "
            << (decode.paged_equals_contiguous ? "equal" : "DIFFER FROM")
            << " the contiguous cache's; largest logit difference vs the full pass "
            << decode.max_logit_difference << "\n"
            << "random 4-layer GPT, d_model 256: " << decode.long_new << " tokens after a "
            << decode.long_prompt << "-token prompt in " << book::fixed(decode.cached_seconds, 2)
            << " s with the KV cache, " << book::fixed(decode.recompute_seconds, 2)
            << " s recomputing every position ("
            << book::fixed(decode.recompute_seconds / decode.cached_seconds, 1)
            << "x); attention kernel: " << book::kv::kernel_path_name(book::kv::best_kernel_path())
            << "\n\n";

  for (const auto& path : write_pictures(dir)) std::cout << "picture: " << path << "\n";
  std::cout << "plot:    " << plot_memory(runs, dir) << "\n\n";

  const double hit_rate =
      prefix.on.queried_blocks ? double(prefix.on.hit_blocks) / prefix.on.queried_blocks : 0.0;
  const std::string no_load = "none: no request waited (budget too large)";
  std::cout
      << "tour: 10 | KV memory holding tokens under load, paged (blocks of " << o.block_size
      << ") vs contiguous (max length / exact) | "
      << (idle.empty() ? pct(paged.memory.token_states) + " vs " + pct(max.memory.token_states) +
                             " / " + pct(runs.systems[2].memory.token_states)
                       : no_load)
      << " | vLLM: 96.3% paged vs 20.4-38.2% reserved\n"
      << "tour: 10 | requests at once in the same KV budget, paged vs contiguous max length | "
      << (idle.empty()
              ? book::fixed(paged.mean_running, 1) + " vs " + book::fixed(max.mean_running, 1) +
                    " = " + book::fixed(paged.mean_running / max.mean_running, 1) + "x"
              : no_load)
      << " | paging fits 3-4x more requests\n";
  std::cout << "tour: 10 | waste per request, paged (blocks of " << o.block_size << ") | mean "
            << book::fixed(paged.mean_waste_per_sequence, 1) << ", max "
            << paged.max_waste_per_sequence << " slots | less than one block\n"
            << "tour: 10 | prefix cache, " << o.system_prompts << " shared "
            << o.system_prompt_tokens << "-token system prompts | " << pct(hit_rate)
            << " block hits, " << pct(prefix.on.sharing_saving)
            << " of KV saved | shared prefixes stored once\n"
            << "tour: 10 | trained addition model decoded with the paged KV cache | "
            << decode.correct << "/" << decode.sums << " right, "
            << (decode.paged_equals_full ? "= full forward" : "!= full forward")
            << " | the cache changes the cost, not the answers\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return book::run_main(argc, argv, body); }
