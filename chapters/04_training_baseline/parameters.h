/// @file
/// All parameters in one flat buffer, all gradients in another with the same layout, and named
/// views into both. Flat buffers are what the parallel chapters need: chapter 5 all-reduces
/// gradients in buckets (contiguous ranges), chapter 6 shards the flat range across ranks.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "chapters/04_training_baseline/config.h"

namespace book::train {

/// One named tensor inside the flat buffer.
struct TensorSlot {
  std::string name;        ///< e.g. "h1.w_qkv"
  std::size_t offset = 0;  ///< first element inside the flat buffer
  std::size_t rows = 0;    ///< rows (1 for vectors)
  std::size_t cols = 0;    ///< columns (row-major)
  bool decay = false;      ///< whether AdamW's weight decay applies (matrices yes, gains/biases no)
  /// rows · cols.
  std::size_t size() const { return rows * cols; }
};

/// The part of one tensor slot that lies inside a range of the flat buffer.
struct SlotPiece {
  const TensorSlot* slot = nullptr;  ///< the tensor
  std::size_t begin = 0;             ///< first element, in flat-buffer indices
  std::size_t end = 0;               ///< one past the last element, in flat-buffer indices
};

/// Where every tensor of a Config lives in the flat buffer. The order is the order of use in the
/// forward pass (embeddings, block 0, ..., final LayerNorm), so a pipeline stage's parameters are
/// one contiguous range.
class ParameterLayout {
 public:
  /// The layout of `config` (validated).
  explicit ParameterLayout(const Config& config);

  /// Every tensor, in buffer order.
  const std::vector<TensorSlot>& slots() const { return slots_; }
  /// Elements in the whole flat buffer (= Config::parameter_count()).
  std::size_t total() const { return total_; }
  /// The slot called `name`; throws book::Error listing a few valid names if there is none.
  const TensorSlot& find(const std::string& name) const;
  /// Elements [begin, end) of the flat buffer that hold block `layer`'s tensors.
  std::pair<std::size_t, std::size_t> layer_range(int layer) const;
  /// The slots that elements [begin, end) touch, each cut to the range, in buffer order: a range
  /// (a ZeRO shard, a bucket) may start and end inside a tensor. Throws book::Error unless
  /// begin <= end <= total().
  std::vector<SlotPiece> pieces(std::size_t begin, std::size_t end) const;
  /// Whether AdamW's weight decay applies to flat element `element` (its slot's decay flag).
  bool decays(std::size_t element) const;

 private:
  std::vector<TensorSlot> slots_;
  std::size_t total_ = 0;
};

/// Pointers to one block's tensors (weights stored [in, out], row-major: y = x · W + b).
template <typename T>
struct BlockTensors {
  T* ln1_gain = nullptr;  ///< [C] first LayerNorm gain
  T* ln1_bias = nullptr;  ///< [C] first LayerNorm bias
  T* w_qkv = nullptr;     ///< [C, 3C] query, key, value projections side by side
  T* b_qkv = nullptr;     ///< [3C]
  T* w_out = nullptr;     ///< [C, C] attention output projection
  T* b_out = nullptr;     ///< [C]
  T* ln2_gain = nullptr;  ///< [C] second LayerNorm gain
  T* ln2_bias = nullptr;  ///< [C] second LayerNorm bias
  T* w_fc = nullptr;      ///< [C, 4C] MLP up-projection
  T* b_fc = nullptr;      ///< [4C]
  T* w_proj = nullptr;    ///< [4C, C] MLP down-projection
  T* b_proj = nullptr;    ///< [C]
};

/// Pointers to every tensor of the model inside one flat buffer (parameters or gradients).
template <typename T>
struct ModelTensors {
  T* wte = nullptr;                     ///< [V, C] token embedding, also the LM head (tied)
  T* wpe = nullptr;                     ///< [context, C] position embedding
  std::vector<BlockTensors<T>> blocks;  ///< one per layer
  T* lnf_gain = nullptr;                ///< [C] final LayerNorm gain
  T* lnf_bias = nullptr;                ///< [C] final LayerNorm bias
};

/// Named pointers into `base`, a flat buffer of layout.total() elements.
template <typename T>
ModelTensors<T> bind(const ParameterLayout& layout, int n_layer, T* base);

}  // namespace book::train
