/// @file
/// Which part of the model a rank holds: a range of blocks (a pipeline stage) and a
/// tensor-parallel slice of each block. The whole model on one device is the default
/// part: every block, slice 0 of 1.
#pragma once

#include "chapters/04_training_baseline/config.h"

namespace book::train {

/// The slice of every block that tensor-parallel rank `rank` of `size` holds (Megatron-LM's
/// split): heads [rank·H/t, (rank+1)·H/t) with their columns of W_qkv and rows of W_out, and MLP
/// hidden units [rank·F/t, (rank+1)·F/t) with their columns of W_fc and rows of W_proj. The
/// LayerNorms and the row-parallel biases b_out and b_proj are replicated: every rank holds them,
/// rank 0 alone adds b_out and b_proj in the forward pass (so the all-reduce sums them once),
/// and every rank computes their (identical) gradients.
///
/// With `split_vocabulary` the token embedding, which is also the tied LM head, is split too:
/// rank r holds rows [r·V/t, (r+1)·V/t) of wte (Megatron-LM's vocabulary-parallel embedding).
/// A Model runs such a part through its tensor-parallel seam (tensor_parallelism.h), whose
/// embedding and cross-entropy work on this rank's rows of the vocabulary.
struct TensorParallelSlice {
  int rank = 0;                   ///< this rank's index in the tensor-parallel group
  int size = 1;                   ///< t, ranks in the group
  bool split_vocabulary = false;  ///< whether wte's rows are split over the group too

  /// Throws book::Error unless 0 <= rank < size and t divides the heads, and, with
  /// split_vocabulary, the vocabulary. (d_ff = 4·d_model = 4·H·head_size, so t then divides the
  /// MLP's hidden units too.)
  void validate(const Config& config) const;
  /// Rows of wte this rank holds: V / t with split_vocabulary, else V.
  int vocab_rows(const Config& config) const {
    return split_vocabulary ? config.vocab_size / size : config.vocab_size;
  }
  /// The first token id of this rank's rows of wte (0 without split_vocabulary).
  int vocab_begin(const Config& config) const {
    return split_vocabulary ? rank * vocab_rows(config) : 0;
  }
  /// Heads per rank, H / t.
  int heads(const Config& config) const { return config.n_head / size; }
  /// This rank's first head.
  int head_begin(const Config& config) const { return rank * heads(config); }
  /// Columns of q (and of k, and of v) per rank: heads · head_size = d_model / t.
  int width(const Config& config) const { return heads(config) * config.head_size(); }
  /// MLP hidden units per rank, d_ff / t.
  int hidden(const Config& config) const { return config.d_ff() / size; }
  /// This rank's first MLP hidden unit.
  int hidden_begin(const Config& config) const { return rank * hidden(config); }
};

/// The part of the model one rank holds. The first part (first_layer 0) holds the embeddings; the
/// last part (last_layer n_layer) the final LayerNorm and the LM head, whose matrix is the token
/// embedding (tied): a last part that is not also the first holds its own copy of wte.
struct ModelPart {
  /// The whole model on one device.
  ModelPart() = default;
  /// Layers [first_layer, last_layer) (-1: n_layer), tensor-parallel slice `tensor_parallel`.
  ModelPart(int first_layer, int last_layer, TensorParallelSlice tensor_parallel = {})
      : first_layer(first_layer), last_layer(last_layer), tensor_parallel(tensor_parallel) {}

  int first_layer = 0;                  ///< first block held
  int last_layer = -1;                  ///< one past the last block held (-1: n_layer)
  TensorParallelSlice tensor_parallel;  ///< the slice of each block held

  /// A copy with -1 replaced by n_layer; throws book::Error if the range is empty or leaves
  /// 0..n_layer, or the slice is invalid for `config`.
  ModelPart resolved(const Config& config) const;
  /// Whether it holds the embeddings (first_layer == 0).
  bool has_embedding() const { return first_layer == 0; }
  /// Whether it holds the final LayerNorm and the LM head (call on a resolved part).
  bool has_head(const Config& config) const { return last_layer == config.n_layer; }
  /// Whether it is all of the model on one device.
  bool is_whole(const Config& config) const {
    return has_embedding() && has_head(config) && tensor_parallel.size == 1;
  }
};

}  // namespace book::train
