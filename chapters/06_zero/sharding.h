/// @file
/// Sharding chapter 4's flat buffers across N ranks, and the exact bytes that follow.
///
/// The unit of sharding is chapter 5's bucket: every collective moves one bucket, and rank r owns,
/// in every bucket, the shard that chapter 3's reduce_scatter hands it, shard_of(bucket size, N,
/// r). Its optimizer state, master weights and (ZeRO-2) gradients are those pieces, one after
/// another: S_r = Σ_b shard_of(|b|, N, r).count elements. The pieces of all ranks tile the buffer,
/// so Σ_r S_r = Ψ exactly.
///
/// Padding. PyTorch FSDP pads its flat parameter to a multiple of N with zeros so that every rank
/// gets the same count; chapter 3's collectives take uneven shards (the first |b| mod N ranks get
/// one element more), so this book pads nothing. What padding would cost is the same thing in
/// another place: a rank owns at most one element more than |b|/N per bucket, so S_r ≤ ⌈Ψ/N⌉ + B
/// for B buckets, and the formulas below use S_r itself, which makes them exact on every rank.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "chapters/05_data_parallel/buckets.h"
#include "chapters/06_zero/zero_options.h"
#include "common/dtype.h"

namespace book::zero {

/// One rank's share of the flat buffers.
struct ShardPlan {
  int world = 1;  ///< N
  int rank = 0;   ///< r
  /// Chapter 5's buckets (bucket 0 ends at the end of the buffer, the last starts at 0).
  std::vector<ddp::FlatRange> buckets;
  /// pieces[b]: this rank's elements of bucket b, in flat-buffer coordinates (stage 0: all of it).
  std::vector<ddp::FlatRange> pieces;
  /// offsets[b]: where pieces[b] starts in this rank's shard (the pieces one after another).
  std::vector<std::size_t> offsets;
  std::size_t owned = 0;           ///< S_r: elements this rank owns, Σ pieces
  std::size_t total = 0;           ///< Ψ: elements of the flat buffer
  std::size_t largest_bucket = 0;  ///< elements of the largest bucket
  std::size_t largest_piece = 0;   ///< elements of this rank's largest piece
};

/// The plan of rank `rank` of `world` for `buckets` (as ddp::plan_buckets returns them). Stage 0
/// owns whole buckets on every rank; stages 1 and 2 own shard_of(|b|, world, rank) of each.
/// Throws book::Error if the buckets do not tile a buffer or the rank is outside [0, world).
ShardPlan plan_shards(std::vector<ddp::FlatRange> buckets, int world, int rank, Stage stage);

/// Model-state bytes of one rank, by tracker category.
struct ModelStateBytes {
  std::uint64_t parameters = 0;        ///< the weights the forward pass reads (16-bit, or FP32)
  std::uint64_t gradients = 0;         ///< the gradients the optimizer reads (16-bit, or FP32)
  std::uint64_t master_weights = 0;    ///< FP32 master weights (mixed precision only)
  std::uint64_t optimizer_states = 0;  ///< Adam's m and v, FP32
  /// The sum: the paper's (2 + 2 + K)Ψ for DDP in mixed precision.
  std::uint64_t total() const { return parameters + gradients + master_weights + optimizer_states; }
  /// Equal in every category.
  bool operator==(const ModelStateBytes&) const = default;
};

/// What a rank of `stage` holds, exactly, for a buffer of `total` (Ψ) elements of which it owns
/// `owned` (S_r), in `precision`. Mixed precision (bf16, f16): 2Ψ parameters; gradients 2Ψ
/// (stages 0–1) or 2S_r (stage 2); master 4S_r; Adam 8S_r (stage 0: S_r = Ψ), i.e. 16Ψ,
/// 4Ψ + 12S_r, 2Ψ + 14S_r. FP32: the FP32 weights are the master (no copy) and the model's
/// FP32 gradient buffer, which backward writes whole, is the gradient: 4Ψ + 4Ψ + 8S_r for every
/// stage (ZeRO-2's gradient saving needs 16-bit gradients a trainer owns apart from the model).
/// Stage 3 shards everything: 2S_r + 2S_r + 4S_r + 8S_r in mixed precision, 4S_r (the FP32
/// weights, also the master) + 4S_r + 8S_r in FP32: 16S_r either way, 16Ψ/N on average (its
/// gather buffers are zero3_communication_bytes, zero3_trainer.h). Throws book::Error if `total`
/// is above 2^59 (the bytes would overflow 64 bits) or `owned` above `total`.
ModelStateBytes model_state_bytes(Stage stage, DType precision, std::size_t total,
                                  std::size_t owned);

/// Bytes of one rank's communication staging buffers (MemoryCategory::kCommunication): stages
/// 1–2 gather from a copy of the largest piece (wire type); stage 2 in mixed precision encodes
/// each bucket into a 16-bit staging buffer of the largest bucket before its reduce-scatter.
std::uint64_t communication_bytes(const ShardPlan& plan, Stage stage, DType precision);

/// The paper's bytes of model state per rank, for real-valued Ψ and N and K bytes of optimizer
/// state per parameter (12 for mixed-precision Adam): (2 + 2 + K)Ψ, 2Ψ + 2Ψ + KΨ/N,
/// 2Ψ + (2 + K)Ψ/N, (2 + 2 + K)Ψ/N. Ψ = 7.5e9, N = 64: 120, 31.4, 16.6, 1.9 GB.
double paper_bytes_per_rank(Stage stage, double psi, double world, double k = 12);

/// The gradient and parameter traffic of one rank in one step.
struct StepTraffic {
  std::int64_t collectives =
      0;  ///< stage 0: B all-reduces; stages 1–2: B reduce-scatters + B all-gathers
  std::uint64_t elements_sent = 0;  ///< elements this rank sends in them (ring)
  std::uint64_t bytes_sent = 0;     ///< elements_sent × the wire type's size
};

/// Exact traffic of rank plan.rank: per bucket, a ring all-reduce sends 2|b| − s_r − s_{r+1}
/// elements; a ring reduce-scatter |b| − s_r and a ring all-gather |b| − s_{r+1} (s_i =
/// shard_of(|b|, N, i).count): the same sum, so ZeRO-1 and -2 move what DDP moves, 2Ψ(N−1)/N per
/// rank on average. The wire type is the training precision (16-bit gradients and weights in
/// mixed precision, FP32 otherwise).
StepTraffic traffic_per_step(const ShardPlan& plan, Stage stage, DType precision);

}  // namespace book::zero
