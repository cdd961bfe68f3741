/// @file
/// Activation recomputation (gradient checkpointing, Chen et al., "Training Deep Nets with
/// Sublinear Memory Cost", 2016) on chapter 4's blocks: keep only the residual stream at segment
/// boundaries, and in backward re-run each segment's forward to refill the activations of its
/// blocks just before their backward. The activations held drop from L blocks' to one segment's;
/// the FLOPs grow by one forward (8N instead of 6N per token when the segment is one block).
#pragma once

#include <vector>

#include "chapters/04_training_baseline/block.h"
#include "chapters/04_training_baseline/model.h"
#include "common/check.h"
#include "common/memory.h"

namespace book::mem {

/// What a recomputing backward needs for segments of up to `segment` blocks of a whole (not
/// tensor-parallel) model: the activations of one segment's blocks and their inputs (reported as
/// MemoryCategory::kActivations), two residual-gradient buffers and a workspace (kOther).
struct RecomputeBuffers {
  /// Room for `segment` blocks of `config` at `max_batch` × context rows.
  RecomputeBuffers(const train::Config& config, int segment, int max_batch,
                   MemoryTracker* tracker = nullptr);
  std::vector<train::BlockActivations<float>> acts;  ///< acts[j]: block first + j's
  std::vector<TrackedBuffer<float>> inputs;  ///< inputs[j], j ≥ 1: the input of block first + j
  TrackedBuffer<float> grad_a;               ///< [N, C] a residual gradient in flight
  TrackedBuffer<float> grad_b;               ///< [N, C] the other one
  train::BlockWorkspace<float> workspace;    ///< the blocks' scratch
  int segment = 0;                           ///< blocks per segment
};

/// Throws book::Error (naming recompute_segment_backward, the blocks and the model's) unless
/// 0 ≤ first ≤ last ≤ the blocks of `params` and of `grads`. Both tracks'
/// recompute_segment_backward call it first, so a segment past the model's last block is
/// refused, never read past the end.
inline void check_segment_in_model(const train::ModelTensors<float>& params,
                                   const train::ModelTensors<float>& grads, int first, int last) {
  BOOK_CHECK(first >= 0 && first <= last &&
                 static_cast<std::size_t>(last) <= params.blocks.size() &&
                 params.blocks.size() == grads.blocks.size(),
             "recompute_segment_backward: blocks ["
                 << first << ", " << last << ") of a model of " << params.blocks.size()
                 << " blocks (" << grads.blocks.size() << " gradient blocks); pass a segment "
                 << "inside [0, n_layer)");
}

/// Exercise mem.recompute_segment: the backward of blocks [first, last) (at most
/// buffers.segment of them) from `x`, the segment's input (its checkpoint): re-run block_forward
/// of each block in order, filling buffers.acts[j] and passing each output on as the next
/// block's input (buffers.inputs), then block_backward from block last − 1 down to first, with
/// `dy` the gradient at the segment's output, writing the gradient at its input into `dx` and
/// adding the parameter gradients into `grads`. Throws book::Error for an empty or too long
/// segment. The gradients equal the stored-activation backward's bit for bit: the recomputed
/// activations are the same numbers.
void recompute_segment_backward(const train::Config& config,
                                const train::ModelTensors<float>& params,
                                const train::ModelTensors<float>& grads, int first, int last,
                                int batch, int seq_len, const float* x, const float* dy, float* dx,
                                RecomputeBuffers& buffers);

/// Chapter 4's Model::backward with recomputation, after model.forward(tokens, targets, ...):
/// head_backward, then recompute_segment_backward over segments of buffers.segment blocks from
/// the top (the checkpoints are the model's residual stream at the segment boundaries), then
/// embed_backward. Throws book::Error for a model part that is not the whole model.
void checkpointed_backward(train::Model<float>& model, RecomputeBuffers& buffers);

}  // namespace book::mem
