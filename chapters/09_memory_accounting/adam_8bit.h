/// @file
/// AdamW with 8-bit moments: m and v stored as one byte each per parameter plus one FP32 scale
/// per moment per block (quantize_8bit.h), decoded to FP32 for the update and encoded again. With
/// the 16-bit weights and gradients and the FP32 master weights, model state drops from
/// 2 + 2 + 4 + 8 = 16 to 2 + 2 + 4 + 2 = 10 bytes per parameter (plus 8 bytes per block).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "chapters/04_training_baseline/optimizer.h"
#include "common/check.h"

namespace book::mem {

/// The 8-bit moments of `size` parameters in blocks of `block` elements (the last one shorter).
struct Adam8bitState {
  std::int64_t block = 2048;    ///< elements per quantisation block
  std::vector<std::int8_t> m;   ///< first moment, linear codes
  std::vector<std::uint8_t> v;  ///< second moment, log codes (255: zero)
  std::vector<float> m_scale;   ///< per block: the largest |m|
  std::vector<float> v_scale;   ///< per block: the largest v
  std::int64_t step = 0;        ///< updates done (the bias correction's t)

  Adam8bitState() = default;
  /// Zero moments for `size` parameters (all codes zero, all scales 0). Throws book::Error if
  /// block_elements < 1.
  Adam8bitState(std::size_t size, std::int64_t block_elements)
      : block(block_elements),
        m(size, 0),
        v(size, 255),
        m_scale(blocks_of(size, block_elements), 0.0f),
        v_scale(m_scale.size(), 0.0f) {}
  /// ⌈size/block⌉: the number of scales per moment. Throws book::Error if block < 1 (checked
  /// here, in the initialiser list, before a division by zero).
  static std::size_t blocks_of(std::size_t size, std::int64_t block) {
    BOOK_CHECK(block >= 1, "Adam8bitState: block must be >= 1, got " << block << " (try 2048)");
    return size / static_cast<std::size_t>(block) +
           (size % static_cast<std::size_t>(block) != 0 ? 1 : 0);
  }
  /// Throws book::Error (naming `who`) unless the state is whole: block >= 1, as many codes of v
  /// as of m, and ⌈m.size()/block⌉ scales of each moment. Both tracks' adam8bit_step call it
  /// first, so a state whose scales are too few is refused, never read past its end.
  void check_consistent(const char* who) const {
    BOOK_CHECK(block >= 1, who << ": the state's block must be >= 1, got " << block);
    const std::size_t blocks = blocks_of(m.size(), block);
    BOOK_CHECK(v.size() == m.size() && m_scale.size() == blocks && v_scale.size() == blocks,
               who << ": a state of " << m.size() << " elements in blocks of " << block << " needs "
                   << m.size() << " codes of v and " << blocks << " scales per moment, it has "
                   << v.size() << " codes and " << m_scale.size() << "/" << v_scale.size()
                   << " scales; build it with Adam8bitState(size, block), and change block only "
                   << "with a new state");
  }
  /// Bytes held: 2 per parameter + 8 per block.
  std::size_t bytes() const {
    return m.size() + v.size() + (m_scale.size() + v_scale.size()) * sizeof(float);
  }
};

/// Exercise mem.adam_8bit_step: one AdamW update of `params` (FP32 master weights) with `grads`,
/// the moments kept in `state`: increment state.step; for each block, decode m and v to FP32,
/// run chapter 4's train::adamw_step on the block, and encode them again. Throws book::Error if
/// params, grads and the state do not have the same number of elements (the state's scales are
/// checked by state.check_consistent, which both tracks call first).
void adam8bit_step(std::span<float> params, std::span<const float> grads, Adam8bitState& state,
                   float lr, const train::AdamWConfig& config);

}  // namespace book::mem
