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

#include "chapters/09_memory_accounting/recomputation.h"
#include "common/check.h"

namespace book::mem {

// What the backward pass recomputes instead of keeping is a Recomputation (recomputation.h):
// kNone keeps every activation; kSelective recomputes the attention core, QKᵀ, softmax, dropout,
// ·V, which drops 5as/h per token; kFull keeps only each layer's input and recomputes the whole
// layer. The same names the trainer runs with (recomputation_policy.h).

/// The inputs of the formula (all positive; t divides a).
struct LayerActivationInputs {
  std::int64_t seq = 0;              ///< s: positions per sequence
  std::int64_t micro_batch = 0;      ///< b: sequences per micro-batch
  std::int64_t hidden = 0;           ///< h: the model's width
  std::int64_t heads = 0;            ///< a: attention heads
  std::int64_t tensor_parallel = 1;  ///< t
  bool sequence_parallel = false;    ///< shard the LayerNorm/dropout regions over t as well
  Recomputation recompute = Recomputation::kNone;  ///< what backward recomputes
};

/// Throws book::Error (naming activation_bytes_per_layer and the values) if the table's largest
/// row, sbh·34 + 5as²b bytes, is above 2^60 (1 EiB): its 64-bit products would wrap (s = 2^24,
/// b = h = 2^20 gave sbh = 2^64 = 0). Values that are not positive pass, for the body to refuse.
/// Both tracks' activation_bytes_per_layer call it first.
inline void check_activation_size(const LayerActivationInputs& in) {
  if (in.seq < 1 || in.micro_batch < 1 || in.hidden < 1 || in.heads < 1) return;
  // In long double: exact enough to compare with 2^60, and it cannot wrap.
  const long double sb = static_cast<long double>(in.seq) * in.micro_batch;
  const long double largest = sb * in.hidden * 34 + 5.0L * in.heads * in.seq * sb;
  BOOK_CHECK(largest <= 0x1p60L, "activation_bytes_per_layer: s="
                                     << in.seq << " b=" << in.micro_batch << " h=" << in.hidden
                                     << " a=" << in.heads << " would keep about " << largest
                                     << " bytes per layer, above 2^60; use a shorter "
                                        "sequence or a smaller micro-batch");
}

/// Exercise mem.activation_bytes: the bytes one layer keeps for its backward pass on one
/// tensor-parallel rank, by the table above, in integer arithmetic (each row's terms summed
/// before the one division by t, so a divisible case is exact). Throws book::Error if a value
/// is not positive or t does not divide a.
std::uint64_t activation_bytes_per_layer(const LayerActivationInputs& in);

}  // namespace book::mem
