/// @file
/// Resharding a sharded checkpoint. A ZeRO rank saves only what it owns: its pieces of the FP32
/// master weights and of Adam's moments. A run restarted on another number of ranks owns other
/// pieces, so each new rank assembles its pieces from the saved ones, whatever N wrote them: a
/// saved piece and a new piece are both ranges of the one flat buffer, and what they share is
/// copied. Chapter 4's format makes each file atomic and checksummed; the manifest (written last)
/// lists the shards and their checksums, so a missing or corrupted shard is named on load.
#pragma once

#include <span>

#include "chapters/05_data_parallel/buckets.h"

namespace book::zero {

/// One saved run of optimizer state: elements [range.begin, range.end) of the flat buffer.
struct SavedPiece {
  ddp::FlatRange range;           ///< where it lies in the flat buffer
  std::span<const float> master;  ///< FP32 master weights, range.size() elements
  std::span<const float> m;       ///< Adam's first moments, range.size() elements
  std::span<const float> v;       ///< Adam's second moments, range.size() elements
};

/// This rank's pieces to fill: `ranges[i]` with `master[i]`, `m[i]`, `v[i]` of ranges[i].size()
/// elements each.
struct NewPieces {
  std::span<const ddp::FlatRange> ranges;    ///< the pieces of the new plan
  std::span<const std::span<float>> master;  ///< where their master weights go
  std::span<const std::span<float>> m;       ///< where their first moments go
  std::span<const std::span<float>> v;       ///< where their second moments go
};

/// Exercise zero.reshard_checkpoint: fill every element of every new piece from the saved pieces
/// (the saved pieces came from any number of ranks). For each
/// new piece and each saved piece, copy the elements both contain — master, m and v — to their
/// places (element e of the flat buffer is element e − range.begin of either piece). Then, if an
/// element of a new piece was contained in no saved piece, throw book::Error naming the first such
/// element and the piece ("the checkpoint does not hold element ..."). Also throw, before copying
/// anything, if the spans of `mine` do not have one entry per range of the range's size, if a
/// saved piece's master, m or v span is not of its range's size (or end < begin), or if two saved
/// pieces overlap (naming both ranges: overlap would count elements twice and hide a missing one).
/// \exercise{zero.reshard_checkpoint}
void reshard(std::span<const SavedPiece> saved, const NewPieces& mine);

}  // namespace book::zero
