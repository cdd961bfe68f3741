// The stage's memory steps: KV bytes per token, the replays and their tables, prefix caching,
// parallel sampling. The decoding and the pictures are in kv_decode.cc.
#include "chapters/10_paged_attention/kv_report.h"

#include <algorithm>
#include <cstdio>
#include <numeric>

#include "chapters/10_paged_attention/block_manager.h"
#include "chapters/10_paged_attention/kv_shape.h"

namespace book::kv::stage {
namespace {

std::string percent(double fraction, int digits = 1) { return fixed(100 * fraction, digits) + "%"; }

std::string bytes_text(double bytes) {
  char text[32];
  if (bytes >= 1 << 30)
    std::snprintf(text, sizeof text, "%.2f GiB", bytes / (1 << 30));
  else if (bytes >= 1 << 20)
    std::snprintf(text, sizeof text, "%.2f MiB", bytes / (1 << 20));
  else if (bytes >= 1 << 10)
    std::snprintf(text, sizeof text, "%.1f KiB", bytes / (1 << 10));
  else
    std::snprintf(text, sizeof text, "%.0f B", bytes);
  return text;
}

}  // namespace

Table kv_cost_table() {
  struct Model {
    const char* name;
    KvShape shape;
    DType element;
    int context;
  };
  const Model models[] = {
      {"chapter 4's addition GPT (served below)", {2, 4, 16}, DType::kF32, 8},
      {"the random long-context GPT (served below)", {4, 8, 32}, DType::kF32, 1024},
      {"OPT-13B (the vLLM paper's example)", {40, 40, 128}, DType::kF16, 2048},
      {"Llama-2-7B", {32, 32, 128}, DType::kF16, 4096},
      {"Llama-3-8B (grouped-query: 8 KV heads)", {32, 8, 128}, DType::kBF16, 8192},
      {"Llama-3-70B (8 KV heads)", {80, 8, 128}, DType::kBF16, 8192},
  };
  Table table({"model", "layers", "KV heads × head_dim", "element", "KV bytes / token",
               "one full-context request"});
  for (const Model& m : models) {
    const std::int64_t per_token = kv_bytes_per_token(m.shape, m.element);
    table.add_row({m.name, std::to_string(m.shape.n_layer),
                   std::to_string(m.shape.n_head) + " × " + std::to_string(m.shape.head_dim),
                   dtype_name(m.element),
                   std::to_string(per_token) + " (" + bytes_text(per_token) + ")",
                   std::to_string(m.context) +
                       " tokens: " + bytes_text(static_cast<double>(per_token) * m.context)});
  }
  return table;
}

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

SamplingRun run_parallel_sampling(int block_size) {
  SamplingRun run{4, 200, 100};
  BlockManager manager(1024, block_size, false);
  std::vector<int> prompt(run.prompt_tokens);
  std::iota(prompt.begin(), prompt.end(), 0);
  manager.add_sequence(0, prompt);
  manager.mark_computed(0, run.prompt_tokens);
  for (SequenceId s = 1; s < run.samples; ++s) manager.fork(0, s);  // n = 4 samples share it
  for (int step = 0; step < run.new_tokens; ++step)
    for (SequenceId s = 0; s < run.samples; ++s) {
      const SlotReservation r = manager.append_token(s, static_cast<int>(1000 * s + step));
      run.copies += r.copy.has_value();
    }
  run.shared_blocks = manager.num_used_blocks();
  run.unshared_blocks = manager.logical_blocks();
  return run;
}

}  // namespace book::kv::stage
