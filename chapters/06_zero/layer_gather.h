/// @file
/// ZeRO-3's parameter gather: every rank holds only its shard of each layer's weights, so before
/// a layer runs (forward, and again backward) the ranks all-gather the layer into a buffer the
/// model reads, and drop it after. It is the all-gather half of ZeRO-1's weight publication, run
/// per layer and twice per micro-batch instead of once per step over everything.
///
/// In mixed precision the shard and the wire are 16-bit, as on a GPU; the model computes in FP32
/// on the CPU (chapter 4's emulation), so the gathered 16-bit layer is decoded into FP32.
#pragma once

#include <cstdint>
#include <span>

#include "chapters/03_collectives/communicator.h"

namespace book::zero {

/// Exercise zero.gather_layer_parameters: all-gather one layer's parameters over `comm`'s N
/// ranks into `full`, the FP32 buffer the model reads (the layer's |unit| elements, every rank).
///
/// `piece` is this rank's shard of the layer in the wire type (piece.dtype: kF32, kBF16 or kF16;
/// throw book::Error naming any other type, e.g. kF64, before communicating), of exactly
/// coll::shard_of(full.size(), N, rank).count elements; throw book::Error naming the rank, the
/// expected count and the one given otherwise (before communicating).
/// - kF32: all-gather `piece` straight into `full`.
/// - kBF16 / kF16: all-gather into the first full.size() elements of `staging` (16-bit; throw
///   book::Error if it is shorter), then train::decode them into `full`.
/// Use Algorithm::kRing: every rank must start the same collective, and the ring is what the
/// traffic formulas count.
/// \exercise{zero.gather_layer_parameters}
void gather_layer_parameters(coll::Communicator& comm, coll::ConstBuffer piece,
                             std::span<std::uint16_t> staging, std::span<float> full);

}  // namespace book::zero
