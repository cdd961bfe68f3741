// The `kv` stage's command line, parsed apart from the stage so that a test can fuzz it.
#include "chapters/10_paged_attention/stage.h"

#include "common/flags.h"

namespace book::kv::stage {

StageOptions parse_stage_options(int argc, const char* const* argv) {
  StageOptions o;
  std::int64_t seed = static_cast<std::int64_t>(o.seed);
  book::Flags flags("kv", "the KV cache: contiguous vs paged memory, prefix caching, decoding");
  flags.add("tour", &o.tour, "the tour's quick run (skips the block-size sweep, shorter decoding)");
  flags.add("requests", &o.requests, "requests in the replayed workload").range(1, 1000000);
  flags
      .add("budget-tokens", &o.budget_tokens,
           "KV slots of the replay (16384 ≈ 12.5 GiB at "
           "OPT-13B's 800 KB per token)")
      .range(1, 1000000000);
  flags.add("max-len", &o.max_len, "the replayed model's context").range(2, 1000000);
  flags.add("block-size", &o.block_size, "tokens per block of the paged server").range(1, 65536);
  flags.add("seed", &seed, "the workload's seed").range(0, 1000000000);
  flags.add("system-prompts", &o.system_prompts, "shared system prompts (prefix caching)")
      .range(1, 1000);
  flags.add("system-prompt-tokens", &o.system_prompt_tokens, "tokens per system prompt")
      .range(1, 1000000);
  flags.add("checkpoint", &o.checkpoint,
            "chapter 4's addition checkpoint (default: the one this chapter's BUILD trains)");
  flags.parse(argc, argv);
  o.seed = static_cast<std::uint64_t>(seed);
  return o;
}

}  // namespace book::kv::stage
