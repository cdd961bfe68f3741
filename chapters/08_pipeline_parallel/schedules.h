/// @file
/// The schedules a reader writes: 1F1B, interleaved 1F1B and zero-bubble ZB-H1, each a plain
/// function from a Shape to per-rank action lists (action.h).
#pragma once

#include "chapters/08_pipeline_parallel/action.h"

namespace book::pp {

/// Exercise pp.one_f_one_b_schedule: 1F1B (PipeDream-Flush, Narayanan et al., 2021). Rank r runs
/// min(p−1−r, m) warm-up forwards, then alternates one forward with one backward until the
/// forwards run out, then the remaining backwards (cool-down); micro-batches in order. Same
/// bubble as GPipe, but rank r never holds more than p−r micro-batches' activations. v must be 1
/// (book::Error otherwise). split_backward is false.
/// \exercise{pp.one_f_one_b_schedule}
Schedule one_f_one_b_schedule(const Shape& shape);

/// Exercise pp.interleaved_schedule: interleaved 1F1B (Narayanan et al., 2021, §2.2), v chunks per
/// rank. Number the rank's forward slots k = 0..v·m−1: slot k is chunk (k / p) mod v of
/// micro-batch (k / (p·v))·p + k mod p; backward slot k is the same micro-batch of chunk
/// v−1−(k / p) mod v. Rank r runs min((p−r−1)·2 + (v−1)·p, v·m) warm-up forwards, then one
/// forward and one backward per step, then the remaining backwards. m must be a multiple of p
/// (book::Error otherwise, naming both), v ≥ 1.
/// \exercise{pp.interleaved_schedule}
Schedule interleaved_schedule(const Shape& shape);

/// Exercise pp.zero_bubble_schedule: ZB-H1 (Qi et al., "Zero Bubble Pipeline Parallelism", 2024).
/// The backward is split into B (input gradient, on the critical path to the stage before) and
/// W (weight gradient, needed by nobody until the optimizer). F and B run in 1F1B's order; rank
/// r lets r weight gradients wait (the first W right after B number r+1, then one W after
/// each later B, the rest at the end), so later ranks fill their cool-down with W. With unit
/// costs its idle time is a third of 1F1B's. m ≥ p and v = 1 (book::Error otherwise);
/// split_backward is true.
/// \exercise{pp.zero_bubble_schedule}
Schedule zero_bubble_schedule(const Shape& shape);

}  // namespace book::pp
