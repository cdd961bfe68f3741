/// @file
/// Activation memory of one transformer layer, after Korthikanti et al., "Reducing Activation
/// Recomputation in Large Transformer Models" (2022, arXiv:2205.05198; MLSys 2023), §4: with s the
/// sequence length, b the micro-batch, h the hidden size, a the heads and t the tensor-parallel
/// degree, a layer keeps (16-bit activations, 1-byte dropout masks), in bytes:
///
/// | what is recomputed | tensor parallel only          | with sequence parallelism |
/// |--------------------|-------------------------------|---------------------------|
/// | nothing            | sbh(10 + 24/t + 5as/(ht))     | sbh(34 + 5as/h)/t         |
/// | selective (attention core) | sbh(10 + 24/t)        | 34·sbh/t                  |
/// | full (keep the layer's input) | 2sbh               | 2sbh/t                    |
///
/// With t = 1 the first row is the paper's sbh(34 + 5as/h): 34 bytes per element of the hidden
/// state in the layer's linear parts, and 5as/h for the attention scores, softmax and its
/// dropout — the term that grows with s².
#pragma once

#include <cstdint>

namespace book::mem {

/// What the backward pass recomputes instead of keeping.
enum class Recompute {
  kNone,       ///< keep every activation
  kSelective,  ///< recompute the attention core (QKᵀ, softmax, dropout, ·V): drops 5as/h
  kFull,       ///< keep only each layer's input; recompute the whole layer in backward
};

/// The inputs of the formula (all positive; t divides a).
struct LayerActivationInputs {
  std::int64_t seq = 0;                    ///< s: positions per sequence
  std::int64_t micro_batch = 0;            ///< b: sequences per micro-batch
  std::int64_t hidden = 0;                 ///< h: the model's width
  std::int64_t heads = 0;                  ///< a: attention heads
  std::int64_t tensor_parallel = 1;        ///< t
  bool sequence_parallel = false;          ///< shard the LayerNorm/dropout regions over t as well
  Recompute recompute = Recompute::kNone;  ///< what backward recomputes
};

/// Exercise mem.activation_bytes: the bytes one layer keeps for its backward pass on one
/// tensor-parallel rank, by the table above, in integer arithmetic (each row's terms summed
/// before the one division by t, so a divisible case is exact). Throws book::Error if a value
/// is not positive or t does not divide a.
std::uint64_t activation_bytes_per_layer(const LayerActivationInputs& in);

}  // namespace book::mem
