/// @file
/// The one batching helper the speculative decoder (spec_decoder.h) and the speculative engine
/// (spec_engine.h) share: run many sequences' chunks on a runner in as few steps as fit.
#pragma once

#include <vector>

#include "chapters/10_paged_attention/model_runner.h"

namespace book::spec {

/// Runs `chunks` (each at most the runner's max_rows rows; no two of one sequence) in as few
/// steps as fit, in order, and returns each chunk's logits: its last row, or all its rows with
/// all_logits. Throws book::Error if a chunk alone exceeds max_rows.
std::vector<std::vector<float>> run_chunks(kv::ModelRunner& runner,
                                           const std::vector<kv::SequenceChunk>& chunks);

}  // namespace book::spec
