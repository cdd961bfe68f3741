// The stage's section "Incremental decoding": chapter 4's trained addition model decoded with the
// paged KV cache (graded; its answers against the full forward pass's and the contiguous
// cache's), and a random long-context model decoded with and without the cache.
#include <algorithm>
#include <cmath>
#include <iostream>

#include "chapters/04_training_baseline/data.h"
#include "chapters/10_paged_attention/attention_cpu.h"
#include "chapters/10_paged_attention/decoding.h"
#include "chapters/10_paged_attention/served_model.h"
#include "chapters/10_paged_attention/stage.h"
#include "common/rng.h"
#include "common/table.h"
#include "common/timer.h"

namespace book::kv::stage {
namespace {

// What the section measured.
struct DecodeRun {
  std::string checkpoint;                // the file served
  int sums = 0;                          // held-out sums asked
  int correct = 0;                       // right answers (paged cache)
  bool paged_equals_full = false;        // the paged cache's answers = the full forward pass's
  bool paged_equals_contiguous = false;  // ... = the contiguous cache's
  double max_logit_difference = 0;       // paged decode vs full forward, largest |Δ logit|
  int long_prompt = 0;                   // the random model's prompt tokens
  int long_new = 0;                      // the random model's new tokens
  double cached_seconds = 0;             // decoding them with the KV cache
  double recompute_seconds = 0;          // decoding them with a full forward pass per token
};

// Prefill each prompt, then feed the full pass's answer tokens one at a time, comparing every
// step's logits with the full forward pass over the same tokens.
double logit_difference(train::Model<float>& model, const std::vector<std::vector<int>>& prompts,
                        const std::vector<std::vector<int>>& answers) {
  const train::Config& config = model.config();
  PagedKvCache cache(kv_shape_of(config), 8, 4);
  ModelRunner runner(model, cache, config.context);
  const std::vector<BlockId> table = {5, 1, 7, 2};  // positions 0..15 in scattered blocks
  double worst = 0;
  for (std::size_t i = 0; i < prompts.size(); ++i) {
    std::vector<int> sequence = prompts[i];
    sequence.insert(sequence.end(), answers[i].begin(), answers[i].end() - 1);
    model.forward(sequence.data(), nullptr, 1, static_cast<int>(sequence.size()));
    for (std::size_t p = prompts[i].size() - 1; p < sequence.size(); ++p) {
      const bool first = p + 1 == prompts[i].size();
      const SequenceChunk chunk{
          first ? std::span(sequence).first(p + 1) : std::span(sequence).subspan(p, 1),
          first ? 0 : static_cast<int>(p), table};
      const auto logits = runner.run({&chunk, 1});
      for (int v = 0; v < config.vocab_size; ++v)
        worst = std::max(
            worst,
            static_cast<double>(std::abs(logits[v] - model.logits()[p * config.vocab_size + v])));
    }
  }
  return worst;
}

DecodeRun run_decoding(const StageOptions& o) {
  DecodeRun run;
  run.checkpoint = o.checkpoint;
  auto model = load_checkpoint_model(o.checkpoint);
  const train::Config& config = model->config();
  run.sums = o.tour ? 200 : 1000;
  const AdditionProblems problems = held_out_additions(config, run.sums, 2024);
  const auto& prompts = problems.prompts;
  const int answer = problems.answer_tokens;
  BlockManager manager(4096, o.block_size);
  PagedKvCache cache(kv_shape_of(config), manager.num_blocks(), o.block_size);
  ModelRunner runner(*model, cache, 512);
  const auto paged = generate_paged(runner, manager, prompts, answer);
  run.correct = problems.count_correct(paged);
  run.paged_equals_full = paged == generate_full_forward(*model, prompts, answer);
  ContiguousKvCache contiguous(kv_shape_of(config), run.sums, config.context);
  ModelRunner contiguous_runner(*model, contiguous.storage(), 512);
  run.paged_equals_contiguous =
      paged == generate_contiguous(contiguous_runner, contiguous, prompts, answer);
  const std::size_t checked = std::min<std::size_t>(50, prompts.size());
  run.max_logit_difference = logit_difference(*model, {prompts.begin(), prompts.begin() + checked},
                                              {paged.begin(), paged.begin() + checked});

  // A random model long enough for the cache to matter: every new token costs O(n) with the
  // cache, O(n²) without (the full pass recomputes every earlier position's K and V).
  train::Config big;
  big.vocab_size = 256;
  big.context = 1024;
  big.n_layer = 4;
  big.n_head = 8;
  big.d_model = 256;
  auto long_model = random_model(big, 3);
  run.long_prompt = o.tour ? 64 : 128;
  run.long_new = o.tour ? 64 : 256;
  std::vector<std::vector<int>> long_prompts(1, std::vector<int>(run.long_prompt));
  Rng rng(2024);  // the random model's prompt (its own stream since the sums moved to a helper)
  for (int& t : long_prompts[0]) t = static_cast<int>(rng.uniform_int(0, big.vocab_size - 1));
  BlockManager long_manager(256, 16);
  PagedKvCache long_cache(kv_shape_of(big), 256, 16);
  ModelRunner long_runner(*long_model, long_cache, 256);
  Timer cached;
  generate_paged(long_runner, long_manager, long_prompts, run.long_new);
  run.cached_seconds = cached.seconds();
  Timer recompute;
  generate_full_forward(*long_model, long_prompts, run.long_new);
  run.recompute_seconds = recompute.seconds();
  return run;
}

}  // namespace

TourLines decoding_section(const StageOptions& o) {
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
            << decode.long_prompt << "-token prompt in " << fixed(decode.cached_seconds, 2)
            << " s with the KV cache, " << fixed(decode.recompute_seconds, 2)
            << " s recomputing every position ("
            << fixed(decode.recompute_seconds / decode.cached_seconds, 1)
            << "x); attention kernel: " << kernel_path_name(best_kernel_path()) << "\n\n";
  return "tour: 10 | trained addition model decoded with the paged KV cache | " +
         std::to_string(decode.correct) + "/" + std::to_string(decode.sums) + " right, " +
         (decode.paged_equals_full ? "= full forward" : "!= full forward") +
         " | the cache changes the cost, not the answers\n";
}

}  // namespace book::kv::stage
