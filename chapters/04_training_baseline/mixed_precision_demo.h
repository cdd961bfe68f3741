/// @file
/// The stage's tables about mixed precision: the memory of a training step, and a demo of FP16's
/// overflow and underflow next to loss scaling and BF16.
#pragma once

#include "chapters/04_training_baseline/trainer.h"
#include "common/table.h"

namespace book::train {

/// One row per buffer of `memory`: bytes, MiB and bytes per parameter.
book::Table memory_table(const MemoryReport& memory);

/// The memory report of a trainer with `options` switched to FP16 storage (built, not trained).
MemoryReport mixed_precision_memory(TrainOptions options);

/// Values around FP16's limits stored as FP16, as FP16 under a 65536 loss scale (then unscaled),
/// and as BF16; the last row measures the share of a real gradient of this model (one batch, at
/// initialisation) that FP16 flushes to zero.
book::Table precision_demo_table();

}  // namespace book::train
