/// @file
/// Seeded request workloads for the memory replay: long-tailed prompt and output lengths (a few
/// very long multimodal prompts among them), and a variant whose prompts start with one of a few
/// shared system prompts (for the prefix cache).
#pragma once

#include <cstdint>
#include <vector>

namespace book::kv {

/// One request: its prompt (token ids) and how many tokens it will generate.
struct Request {
  int id = 0;               ///< position in the workload
  std::vector<int> prompt;  ///< token ids
  int output_tokens = 0;    ///< tokens it generates before it finishes (>= 1)
  bool multimodal = false;  ///< a long image-sized prompt
  int system_prompt = -1;   ///< which shared system prompt it starts with (-1: none)

  /// Prompt plus output: the most KV slots the request ever holds.
  int total_tokens() const { return static_cast<int>(prompt.size()) + output_tokens; }
};

/// The shape of a workload. The defaults follow the vLLM paper's setting (OPT-13B's 2048-token
/// context; conversation-like lengths of a few hundred tokens with a long tail, as in the ShareGPT
/// traces it replays): log-normal lengths with medians 100 and 200, plus 2% multimodal prompts of
/// 2 to 3 images at 576 tokens each (LLaVA-1.5's 336-pixel encoder).
struct WorkloadOptions {
  int requests = 600;                 ///< how many
  std::uint64_t seed = 10;            ///< the same seed gives the same workload everywhere
  int max_len = 2048;                 ///< the model's context: prompt + output never exceed it
  double prompt_median = 100;         ///< median text prompt, tokens
  double output_median = 200;         ///< median output, tokens
  double sigma = 1.0;                 ///< log-normal spread (1.0: mean ≈ 1.65 × median)
  double multimodal_fraction = 0.02;  ///< share of image-sized prompts
  int image_tokens = 576;             ///< tokens per image
  int vocab = 32000;                  ///< token ids are drawn from [0, vocab)
  /// Shared system prompts (0: none). Request i starts with system prompt i mod count.
  int system_prompts = 0;
  int system_prompt_tokens = 600;  ///< length of each shared system prompt
};

/// The requests of `options`, in arrival order. Throws book::Error on options out of range
/// (no requests, max_len < 2, medians < 1, a system prompt that leaves no room for the rest).
std::vector<Request> make_workload(const WorkloadOptions& options);

}  // namespace book::kv
