/// @file
/// The supervisor's checkpoint folder: one file per checkpoint, named by its step
/// (`step-00000010.ckpt`, chapter 4's format, written atomically by chapter 5's DdpTrainer::save),
/// so several can be kept and the newest that verifies chosen after a failure. A sharded
/// checkpoint (chapter 6's ZeRO: a manifest and one file per shard) is a folder of that name. A
/// file that does not verify is set aside as `<name>.corrupt` for a person to look at, never
/// loaded.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "chapters/15_production_training/recovery.h"

namespace book::prod {

/// `<dir>/step-<8 digits>.ckpt`.
std::string checkpoint_file(const std::string& dir, std::int64_t step);

/// Creates `dir` if missing, checks that a file can be created in it (a probe file, removed), and
/// removes checkpoints (`step-*.ckpt`, `.tmp`, `.corrupt`) an earlier run left. Throws book::Error
/// naming the folder and the system's reason when it cannot be created or written: call it before
/// training, not at the first checkpoint.
void prepare_checkpoint_dir(const std::string& dir);

/// The checkpoints in `dir`, oldest first, each read back whole (chapter 4's reader: magic, size,
/// checksum; a sharded one: its manifest and every shard) to say whether it verified.
std::vector<CheckpointOnDisk> verify_checkpoints(const std::string& dir);

/// Renames the checkpoint of `step` to `<name>.corrupt`.
void set_aside_checkpoint(const std::string& dir, std::int64_t step);

/// Removes all but the newest `keep` checkpoints.
void prune_checkpoints(const std::string& dir, int keep);

/// After a failure in step `failed_step`: reads back every checkpoint in `dir`, sets aside those
/// that do not verify (their steps go to `unverified`), and returns restart_plan's answer.
RestartPlan plan_restart(const std::string& dir, std::int64_t failed_step,
                         std::vector<std::int64_t>* unverified);

/// Flips one byte in the middle of the newest checkpoint (a sharded one: of its manifest), a silent
/// disk error, and returns its step, or 0 when there is none.
std::int64_t corrupt_newest_checkpoint(const std::string& dir);

}  // namespace book::prod
