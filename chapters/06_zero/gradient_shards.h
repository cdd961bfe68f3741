/// @file
/// ZeRO's gradient reduction: each rank needs the mean gradient only of the elements it updates,
/// so instead of an all-reduce (every rank gets every mean) a bucket is reduce-scattered (rank r
/// gets the mean of its piece, shard_of(|b|, N, r), and nothing else). The ring reduce-scatter is
/// the first half of the ring all-reduce, so it sends half the bytes (Ψ(N−1)/N per rank, chapter
/// 3); the all-gather of the updated weights afterwards is the other half.
///
/// In mixed precision the gradients travel in 16 bits, as a GPU's would: the FP32 gradients the
/// CPU's backward wrote (chapter 4's emulation) are encoded into a 16-bit staging buffer first.
#pragma once

#include <cstdint>
#include <span>

#include "chapters/03_collectives/communicator.h"
#include "common/dtype.h"

namespace book::zero {

/// Exercise zero.reduce_scatter_gradients: reduce-scatter one bucket of gradients over `comm`'s
/// N ranks, the mean over ranks, in the wire type `wire`.
///
/// `grads` holds this rank's FP32 gradients of the bucket (the same count on every rank).
/// `piece` receives this rank's piece of the mean: it must have exactly
/// coll::shard_of(grads.size(), N, rank).count elements of type `wire`; throw book::Error naming
/// the rank, the expected count and type and the ones given otherwise (before communicating).
/// - wire kF32: reduce-scatter `grads` itself (it may contain `piece`: chapter 3's reduce_scatter
///   reads its input before it writes its output).
/// - wire kBF16 / kF16: encode `grads` into the first grads.size() elements of `staging` (chapter
///   4's train::encode; throw book::Error if staging is shorter), then reduce-scatter those 16-bit
///   values (a coll::ConstBuffer of `wire`).
/// Use ReduceOp::kAvg and Algorithm::kRing: every rank must start the same collective, and the
/// ring is what the traffic formulas count.
/// \exercise{zero.reduce_scatter_gradients}
void reduce_scatter_bucket(coll::Communicator& comm, DType wire, std::span<const float> grads,
                           std::span<std::uint16_t> staging, coll::Buffer piece);

}  // namespace book::zero
