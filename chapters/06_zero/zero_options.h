/// @file
/// What defines a ZeRO run: the one-device run it must reproduce (chapter 4's TrainOptions), the
/// stage (what is sharded), and the bucket size (chapter 5's buckets: the unit of every
/// collective and of the shards). Every rank is given equal options; the trainer checks this
/// with a fingerprint before it allocates anything.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "chapters/04_training_baseline/trainer.h"
#include "chapters/05_data_parallel/buckets.h"

namespace book::zero {

/// What each rank keeps of the model state (Rajbhandari et al., "ZeRO: Memory Optimizations
/// Toward Training Trillion Parameter Models", SC 2020, §5: P_os, P_os+g, P_os+g+p).
enum class Stage {
  kDdp = 0,    ///< stage 0: everything replicated (chapter 5's DDP): 16Ψ bytes per rank
  kZero1 = 1,  ///< optimizer states (FP32 master, Adam's m and v) sharded: 4Ψ + 12Ψ/N
  kZero2 = 2,  ///< ... and the 16-bit gradients, reduce-scattered during backward: 2Ψ + 14Ψ/N
  kZero3 = 3,  ///< ... and the 16-bit parameters (FSDP), gathered layer by layer: 16Ψ/N
};

/// "ddp", "zero1", "zero2", "zero3".
const char* stage_name(Stage stage);
/// Parses "0".."3" or a stage_name. Throws book::Error listing the valid stages otherwise.
Stage parse_stage(std::string_view text);

/// One ZeRO run, as every rank sees it.
struct ZeroOptions {
  /// The one-device run: its micro_batch is the *global* micro-batch (each of the N ranks runs
  /// micro_batch / N sequences), as in chapter 5's DdpOptions.
  train::TrainOptions train;
  Stage stage = Stage::kZero1;                          ///< what is sharded
  std::size_t bucket_bytes = ddp::kPyTorchBucketBytes;  ///< bucket cap (FP32 bytes of gradient)
};

/// `options` with the task's vocabulary and context filled in, after chapter 5's checks (batch
/// divisible by the ranks, a training precision, a bucket of ≥ 1 byte, a valid schedule) and
/// ZeRO's: a stage 0–3 and no more ranks than parameters (a rank with an empty shard has nothing
/// to update). Stage 3 ignores bucket_bytes: its units are the layers. Throws book::Error saying
/// which value is wrong and what would do.
ZeroOptions resolve(const ZeroOptions& options, int world_size);

/// FNV-1a of every field every rank must agree on (chapter 5's fingerprint plus the stage).
std::uint64_t fingerprint(const ZeroOptions& options);

}  // namespace book::zero
