/// @file
/// The memory calculator: the bytes one rank needs to train a model, by category, for a DP × TP
/// × PP grid, a ZeRO stage, a micro-batch, a sequence length, a recomputation policy and an
/// optimizer. Model states by chapter 6's formula (model_states.h), activations by Korthikanti
/// et al. (activation_memory.h), communication buffers and overhead by the assumptions below.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "chapters/09_memory_accounting/activation_memory.h"
#include "chapters/09_memory_accounting/model_shape.h"
#include "chapters/09_memory_accounting/model_states.h"
#include "common/dtype.h"

namespace book::mem {

/// The optimizer whose state the rank keeps (besides the FP32 master weights).
enum class Optimizer {
  kAdam,      ///< FP32 m and v: 8 bytes per parameter (with the master: the paper's K = 12)
  kAdam8bit,  ///< block-wise 8-bit m and v (Dettmers et al. 2022): 2 bytes + one FP32 scale
              ///< per moment per block of kAdam8bitBlock (K ≈ 6: 16 → 10 bytes per parameter)
};

/// Elements per quantisation block of 8-bit Adam (bitsandbytes uses 2048).
inline constexpr std::int64_t kAdam8bitBlock = 2048;

/// Parses a recomputation_name (recomputation.h); throws book::Error naming --recompute
/// otherwise.
Recomputation parse_recompute(std::string_view text);
/// "adam", "adam8bit".
const char* optimizer_name(Optimizer optimizer);
/// Parses an optimizer_name; throws book::Error naming --optimizer otherwise.
Optimizer parse_optimizer(std::string_view text);

/// One training configuration.
struct Setup {
  ModelShape shape;                                ///< the model
  Parallelism parallel;                            ///< the grid and the ZeRO stage
  DType precision = DType::kBF16;                  ///< mixed precision (bf16, f16) or f32
  std::int64_t seq = 2048;                         ///< s: positions per sequence
  std::int64_t micro_batch = 1;                    ///< b: sequences per micro-batch
  Recomputation recompute = Recomputation::kNone;  ///< activation recomputation
  Optimizer optimizer = Optimizer::kAdam;          ///< optimizer state
  std::uint64_t bucket_bytes = 25u << 20;  ///< DDP/ZeRO gradient bucket (FP32 bytes; PyTorch's)
  std::uint64_t overhead_bytes = 0;        ///< CUDA context, library workspaces, allocator cache
};

/// Bytes of one rank, by category.
struct Breakdown {
  std::uint64_t parameters = 0;         ///< weights the forward pass reads
  std::uint64_t gradients = 0;          ///< gradients backward writes
  std::uint64_t master_weights = 0;     ///< FP32 master weights (mixed precision)
  std::uint64_t optimizer_moments = 0;  ///< m and v (FP32, or 8-bit with scales)
  std::uint64_t activations = 0;     ///< what the forward pass keeps, every micro-batch in flight
  std::uint64_t communication = 0;   ///< gradient buckets, gathered layers, pipeline buffers
  std::uint64_t overhead = 0;        ///< Setup::overhead_bytes
  std::int64_t rank_parameters = 0;  ///< Ψ_rank (model_states.h)
  /// The optimizer states as the ZeRO paper counts them: master + moments (K·Ψ).
  std::uint64_t optimizer_states() const { return master_weights + optimizer_moments; }
  /// Everything.
  std::uint64_t total() const;
};

/// Throws book::Error naming the flag for a setup that cannot run: a shape validate() refuses,
/// --tp not dividing --heads, --kv-heads or --d-model, --pp not dividing --layers, a degree,
/// --seq or --micro-batch outside [1, 2^20] (--seq 2^24), --sequence-parallel without --tp > 1,
/// an f64 precision, a bucket_bytes above 2^40 or an overhead_bytes above 2^58.
void validate(const Setup& setup);

/// The bytes of the rank that needs the most. Activations: activation_bytes_per_layer × the
/// n_layer/pp layers on the first stage × the pp micro-batches 1F1B keeps in flight there, plus
/// (Korthikanti §4.3) the embedding's dropout mask sbhp/t and, when one stage holds the head, the
/// output layer's 4sbh(1 + v/h)/t. Communication: with dp > 1, two gradient buckets in the
/// training precision (one being reduced, one being filled); ZeRO-3 adds two gathered layers
/// (this one and the prefetched next), each the rank's tensor-parallel share of it
/// (⌈matrices/tp⌉ + norms, as rank_parameters counts it); pp > 1 adds a send and a receive buffer
/// of one micro-batch's boundary activations (sbh 16-bit values each, /t with sequence
/// parallelism).
Breakdown calculate(const Setup& setup);

/// The breakdown as one JSON object of bytes: parameters, gradients, optimizer_states (master +
/// moments), activations, communication, overhead, total.
std::string to_json(const Breakdown& b);

/// Model FLOPs per token, 6N (forward 2N, backward 4N): what MFU credits.
double model_flops_per_token(double matmul_parameters);
/// Hardware FLOPs per token: 8N with full recomputation (the forward runs twice), 6N otherwise
/// (selective recomputation's attention core is not in N): what HFU credits.
double hardware_flops_per_token(double matmul_parameters, Recomputation recompute);

}  // namespace book::mem
