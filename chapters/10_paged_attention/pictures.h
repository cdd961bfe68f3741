/// @file
/// Pictures of a BlockManager's state, drawn from the real object (so the README's pictures
/// cannot drift from the code): each sequence's logical blocks in a row, the physical pool below,
/// a line from every logical block to the physical block its table names.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "chapters/10_paged_attention/block_manager.h"

namespace book::kv {

/// One panel: a caption and the sequences to draw, each with a label.
struct PicturePanel {
  std::string caption;                    ///< above the panel
  const BlockManager* manager = nullptr;  ///< the state to draw (not owned)
  std::vector<SequenceId> sequences;      ///< rows, top to bottom
  std::vector<std::string> labels;        ///< one per sequence
};

/// An SVG with the panels side by side. Physical blocks are coloured by reference count (free,
/// 1, shared) and show their filled slots; a logical block's filled slots are its tokens.
/// Throws book::Error if a panel has no manager or its labels do not match its sequences.
std::string block_tables_svg(std::span<const PicturePanel> panels);

}  // namespace book::kv
