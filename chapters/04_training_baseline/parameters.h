/// @file
/// All parameters in one flat buffer, all gradients in another with the same layout, and named
/// views into both. Flat buffers are what parallel training needs: gradients are sent in buckets
/// (contiguous ranges), and a flat range is easy to shard across ranks.
///
/// A layout describes the part of the model one rank holds (partition.h): the whole model, a
/// pipeline stage's blocks, a tensor-parallel rank's slices, or both.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "chapters/04_training_baseline/config.h"
#include "chapters/04_training_baseline/partition.h"

namespace book::train {

/// How a tensor is divided among the ranks of a tensor-parallel group.
enum class TensorParallelSplit {
  kReplicated,  ///< every rank holds all of it (embeddings, LayerNorms, b_out, b_proj)
  kColumns,     ///< each rank holds 1/t of the columns of each column group (W_qkv, W_fc, biases)
  kRows,        ///< each rank holds 1/t of the rows (W_out, W_proj; wte with split_vocabulary)
};

/// One named tensor inside the flat buffer.
struct TensorSlot {
  std::string name;        ///< e.g. "h1.w_qkv"
  std::size_t offset = 0;  ///< first element inside the flat buffer
  std::size_t rows = 0;    ///< rows held here (1 for vectors)
  std::size_t cols = 0;    ///< columns held here (row-major)
  bool decay = false;      ///< whether AdamW's weight decay applies (matrices yes, gains/biases no)
  /// How the whole tensor is split across tensor-parallel ranks (rows and cols are this rank's).
  TensorParallelSplit split = TensorParallelSplit::kReplicated;
  /// For kColumns: the column groups split separately (3 for W_qkv: q, k and v each lose the same
  /// heads), else 1.
  int column_groups = 1;
  /// rows · cols.
  std::size_t size() const { return rows * cols; }
};

/// The part of one tensor slot that lies inside a range of the flat buffer.
struct SlotPiece {
  const TensorSlot* slot = nullptr;  ///< the tensor
  std::size_t begin = 0;             ///< first element, in flat-buffer indices
  std::size_t end = 0;               ///< one past the last element, in flat-buffer indices
};

/// Where every tensor of a model part lives in its flat buffer. The order is the order of use in
/// the forward pass, so each block is one contiguous range: embeddings (wte, wpe; first part
/// only), blocks first..last-1, the final LayerNorm (last part only), then, in a last part that
/// does not hold the embeddings, its own copy of the tied wte for the LM head.
class ParameterLayout {
 public:
  /// The layout of `part` of `config` (both validated); by default the whole model.
  explicit ParameterLayout(const Config& config, const ModelPart& part = {});

  const Config& config() const { return config_; }  ///< the model's shape
  const ModelPart& part() const { return part_; }   ///< the part held (resolved)
  /// Every tensor, in buffer order.
  const std::vector<TensorSlot>& slots() const { return slots_; }
  /// Elements in the whole flat buffer (= Config::parameter_count() for the whole model).
  std::size_t total() const { return total_; }
  /// Whether there is a slot called `name`.
  bool contains(const std::string& name) const;
  /// The slot called `name`; throws book::Error listing a few valid names if there is none.
  const TensorSlot& find(const std::string& name) const;
  /// Elements [begin, end) of the flat buffer that hold block `layer`'s tensors (the model's
  /// layer index); throws book::Error if the part does not hold it.
  std::pair<std::size_t, std::size_t> layer_range(int layer) const;
  /// Elements of wte and wpe (first part only; throws otherwise).
  std::pair<std::size_t, std::size_t> embedding_range() const;
  /// Elements of the final LayerNorm, and of wte when the part holds the head but not the
  /// embeddings (last part only; throws otherwise). It ends at total().
  std::pair<std::size_t, std::size_t> head_range() const;
  /// The slots that elements [begin, end) touch, each cut to the range, in buffer order: a range
  /// (a slice of the buffer, a bucket of gradients) may start and end inside a tensor. Throws
  /// book::Error unless begin <= end <= total().
  std::vector<SlotPiece> pieces(std::size_t begin, std::size_t end) const;
  /// Whether AdamW's weight decay applies to flat element `element` (its slot's decay flag).
  bool decays(std::size_t element) const;

 private:
  Config config_;
  ModelPart part_;
  std::vector<TensorSlot> slots_;
  std::size_t total_ = 0;
};

/// Pointers to one block's tensors (weights stored [in, out], row-major: y = x · W + b), as this
/// rank holds them: with a tensor-parallel slice of width w = d_model/t and hidden units
/// f = d_ff/t, W_qkv is [C, 3w] (this rank's q, k and v columns side by side), W_out [w, C],
/// W_fc [C, f], W_proj [f, C].
template <typename T>
struct BlockTensors {
  T* ln1_gain = nullptr;  ///< [C] first LayerNorm gain
  T* ln1_bias = nullptr;  ///< [C] first LayerNorm bias
  T* w_qkv = nullptr;     ///< [C, 3w] query, key, value projections side by side
  T* b_qkv = nullptr;     ///< [3w]
  T* w_out = nullptr;     ///< [w, C] attention output projection
  T* b_out = nullptr;     ///< [C] (replicated)
  T* ln2_gain = nullptr;  ///< [C] second LayerNorm gain
  T* ln2_bias = nullptr;  ///< [C] second LayerNorm bias
  T* w_fc = nullptr;      ///< [C, f] MLP up-projection
  T* b_fc = nullptr;      ///< [f]
  T* w_proj = nullptr;    ///< [f, C] MLP down-projection
  T* b_proj = nullptr;    ///< [C] (replicated)
};

/// Pointers to every tensor a part holds inside one flat buffer (parameters or gradients); null
/// for tensors the part does not hold.
template <typename T>
struct ModelTensors {
  /// [V, C] token embedding, also the LM head (tied): first and last parts ([V/t, C], this rank's
  /// rows, with TensorParallelSlice::split_vocabulary)
  T* wte = nullptr;
  T* wpe = nullptr;                     ///< [context, C] position embedding: first part
  std::vector<BlockTensors<T>> blocks;  ///< blocks[i] is block first_layer + i
  T* lnf_gain = nullptr;                ///< [C] final LayerNorm gain: last part
  T* lnf_bias = nullptr;                ///< [C] final LayerNorm bias: last part
};

/// Named pointers into `base`, a flat buffer of layout.total() elements.
template <typename T>
ModelTensors<T> bind(const ParameterLayout& layout, T* base);

/// The tensors of `layout`, every pointer null (a model that owns no buffers, model.h).
template <typename T>
ModelTensors<T> unbound(const ParameterLayout& layout);

/// Re-points the tensors of `tensors` that lie inside flat elements [begin, end) at
/// `base` + (offset − begin), a buffer of end − begin elements; the others keep their pointers.
/// Throws book::Error if base is null, end exceeds layout.total() or a tensor straddles begin or
/// end.
template <typename T>
void rebind(const ParameterLayout& layout, std::size_t begin, std::size_t end, T* base,
            ModelTensors<T>& tensors);

}  // namespace book::train
