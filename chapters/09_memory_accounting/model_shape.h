/// @file
/// The shape of a decoder-only transformer as the memory calculator sees it, the presets the
/// chapter prices (GPT-3 175B, Llama-2 7B/13B/70B, chapter 4's model) and its parameter count,
/// split the way tensor and pipeline parallelism split it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "chapters/04_training_baseline/config.h"

namespace book::mem {

/// A GPT-2/GPT-3-style or a Llama-style decoder. The activation formulas (activation_memory.h)
/// assume the GPT layout; for Llama they are the usual approximation.
struct ModelShape {
  std::string name = "custom";  ///< the preset's name, or "custom"
  int n_layer = 0;              ///< transformer blocks (L)
  int d_model = 0;              ///< hidden size (h)
  int n_head = 0;               ///< attention heads (a)
  int n_kv_head = 0;            ///< key/value heads (grouped-query attention; = n_head without)
  int d_ff = 0;                 ///< MLP hidden width
  int vocab_size = 0;           ///< vocabulary (v)
  int context = 0;              ///< positions of a learned position embedding (0: rotary)
  bool llama = false;           ///< RMSNorm, SwiGLU (three MLP matrices), no biases, untied head
};

/// The parameters of a shape, by where they live.
struct ParameterBreakdown {
  std::int64_t layer_matrices = 0;  ///< one block's weight matrices and biases (split by TP)
  std::int64_t layer_norms = 0;     ///< one block's normalisation gains/biases (replicated)
  std::int64_t embedding = 0;       ///< token (+ position) embeddings: the first stage
  std::int64_t head = 0;            ///< untied LM head and the final norm: the last stage
  std::int64_t total = 0;           ///< n_layer · (matrices + norms) + embedding + head
};

/// The parameter count of `shape`, by part. Throws book::Error (naming the flag) for a shape
/// validate() refuses.
ParameterBreakdown parameters_of(const ModelShape& shape);

/// Throws book::Error naming the flag (--layers, --d-model, --heads, --kv-heads, --d-ff,
/// --vocab) of the first field that is not positive, too large to be a model (more than 2^20
/// wide, 10^5 layers, 2^24 vocabulary), or inconsistent (heads not dividing d_model, kv heads
/// not dividing heads).
void validate(const ModelShape& shape);

/// The names preset() knows: "gpt3-175b", "llama2-7b", "llama2-13b", "llama2-70b", "book".
std::vector<std::string> preset_names();

/// A named shape. "book" is chapter 4's model at its defaults with the addition task's
/// vocabulary and context (digits = 3). Throws book::Error for an unknown name, listing the
/// valid ones, with "--model".
ModelShape preset(std::string_view name);

/// Chapter 4's model as a shape (GPT-2 style: LayerNorm, biases, tied head, learned positions).
ModelShape from_book_config(const train::Config& config);

}  // namespace book::mem
