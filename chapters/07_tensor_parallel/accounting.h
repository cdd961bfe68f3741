/// @file
/// The formulas the tests and the stage hold the tensor-parallel model against, derived from the
/// shapes alone (not from the code that allocates or communicates): the parameters a rank holds,
/// the activations one layer keeps, and every collective of a step with its size. Megatron-LM's
/// activation formula (Korthikanti et al., "Reducing Activation Recomputation in Large Transformer
/// Models", 2022, §4 and Table 2) is here too, for comparison.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "chapters/04_training_baseline/config.h"
#include "chapters/04_training_baseline/partition.h"
#include "chapters/07_tensor_parallel/conjugate.h"
#include "chapters/07_tensor_parallel/tensor_parallel_group.h"

namespace book::tp {

/// Elements of parameters (and of gradients) a rank of `part` holds as a tensor-parallel
/// train::Model (tensor_parallel_seam.h), t the part's tensor-parallel size, vocabulary split: wte
/// V·C/t (a part with the embeddings or the head), wpe S·C (embeddings), per layer (12C² + 7C)/t
/// sharded + 6C replicated (two LayerNorms, b_out, b_proj), the final LayerNorm 2C (head).
std::size_t parameter_elements(const train::Config& config, const train::ModelPart& part);

/// Bytes one layer keeps for its backward pass on one rank (train::Activations::layer_bytes),
/// for a micro-batch of B sequences of S tokens, N = B·S, held = N (or N/t with sequence
/// parallelism): element_size · [held·(4C + 4) + N·12C/t + B·(H/t)·S²]. The 4C per held token are
/// the layer's input, LN1's output, the residual r and LN2's output; 4 their two LayerNorms'
/// statistics; 12C/t per token the column and row layers' tensors (q, k, v 3C/t, attention output
/// C/t, MLP pre- and post-GELU 8C/t); B·(H/t)·S² the attention probabilities. Requires B, S ≥ 1,
/// t ≥ 1 dividing H, and with sequence parallelism t dividing N; throws book::Error otherwise.
std::size_t layer_activation_bytes(const train::Config& config, int batch, int seq_len, int t,
                                   SequenceParallel sequence_parallel, std::size_t element_size);

/// Megatron-LM's activation bytes per layer (Korthikanti et al. 2022, Table 2), 16-bit
/// activations and 1-byte dropout masks: sbh(34 + 5as/h) at t = 1; sbh(10 + 24/t + 5as/(ht))
/// with tensor parallelism; sbh/t · (34 + 5as/h) with tensor and sequence parallelism.
double megatron_layer_activation_bytes(double s, double b, double h, double a, int t,
                                       SequenceParallel sequence_parallel);

/// Megatron-LM's accounting with its dropout terms removed (chapter 4's model has no dropout:
/// the masks after attention and the MLP, 2sbh bytes, and the attention-dropout mask and output,
/// 3as²b), counted in elements rather than 2-byte units: sbh(4 + 12/t) + as²b/t with tensor
/// parallelism, sbh·16/t + as²b/t with sequence parallelism too. It is layer_activation_bytes
/// without the LayerNorm statistics: the same terms, held the same way.
double megatron_without_dropout_elements(double s, double b, double h, double a, int t,
                                         SequenceParallel sequence_parallel);

/// The kinds of collective tensor parallelism calls.
enum class Collective {
  kAllReduce,      ///< a sum, on every rank
  kReduceScatter,  ///< a sum, each rank its 1/t
  kAllGather,      ///< every rank's 1/t, on every rank
};

/// "all-reduce", "reduce-scatter" or "all-gather".
const char* collective_name(Collective kind);

/// One collective call: its kind and its size in elements, counted as CollectiveCounts counts
/// them (all-reduce: the buffer; reduce-scatter: the input; all-gather: the output).
struct CollectiveCall {
  Collective kind = Collective::kAllReduce;  ///< what it does
  std::uint64_t elements = 0;                ///< how many elements it covers
  std::string what;                          ///< where it is, e.g. "attention out (g)"
};

/// The collectives of one block's forward pass, in order, for `tokens` = B·S tokens of width C:
/// off, 2 all-reduces of N·C; on, all-gather, reduce-scatter, all-gather, reduce-scatter of N·C.
std::vector<CollectiveCall> layer_forward_collectives(std::uint64_t tokens, int channels,
                                                      SequenceParallel sequence_parallel);
/// The collectives of one block's backward pass, in order: off, 2 all-reduces of N·C; on, 4
/// all-gathers (2 conjugates of the scatters, 2 re-gathers of a LayerNorm output for the weight
/// gradient) and 2 reduce-scatters of N·C.
std::vector<CollectiveCall> layer_backward_collectives(std::uint64_t tokens, int channels,
                                                       SequenceParallel sequence_parallel);
/// Every collective of one micro-batch's forward and backward through the whole model, then
/// finish_gradients(): the embedding, the layers, the head and the parallel cross-entropy (an
/// all-gather of N row maxima per rank and an all-reduce of 2N numbers — never the N·V logits).
std::vector<CollectiveCall> step_collectives(const train::Config& config, int batch, int seq_len,
                                             int t, SequenceParallel sequence_parallel);

/// The calls and elements of `calls` per kind.
CollectiveCounts count(const std::vector<CollectiveCall>& calls);
/// Elements rank `rank` of `t` sends for `calls` when each runs chapter 3's ring: an all-reduce
/// of m sends 2m − m_r − m_{r+1}, a reduce-scatter m − m_r, an all-gather m − m_{r+1}, with m_i
/// = shard_of(m, t, i).count — 2(t−1)/t·m and (t−1)/t·m when t divides m.
std::uint64_t ring_elements_sent(const std::vector<CollectiveCall>& calls, int t, int rank);

}  // namespace book::tp
