/// @file
/// The model's shape, its parameter count and its FLOPs per token.
#pragma once

#include <cstdint>

namespace book::train {

/// The shape of the GPT: a decoder-only transformer as in BOOK.md "The model".
struct Config {
  int vocab_size = 12;  ///< tokens in the vocabulary (the addition task uses 12: 0-9, '+', '=')
  int context = 11;     ///< longest sequence the position embedding covers
  int n_layer = 2;      ///< transformer blocks
  int n_head = 4;       ///< attention heads per block
  int d_model = 64;     ///< width of the residual stream; a multiple of n_head

  /// Width of one attention head, d_model / n_head.
  int head_size() const { return d_model / n_head; }
  /// Hidden width of the MLP, 4 · d_model as in GPT-2.
  int d_ff() const { return 4 * d_model; }

  /// Throws book::Error naming the first field out of range.
  void validate() const;

  /// Every parameter: embeddings (token + position), blocks, final LayerNorm.
  std::int64_t parameter_count() const;

  /// The parameters that take part in a matrix product per token: the blocks' weight matrices
  /// plus the tied LM head (vocab × d_model). This is the N of "6N FLOPs per token".
  std::int64_t matmul_parameter_count() const;

  /// Training FLOPs per token at sequence length `seq_len`: 6N (forward 2N, backward 4N) plus
  /// attention's scores and weighted sum, 12 · n_layer · d_model · seq_len (PaLM's appendix B
  /// formula; the causal mask's halving is not credited, as is customary).
  double training_flops_per_token(int seq_len) const;
};

}  // namespace book::train
