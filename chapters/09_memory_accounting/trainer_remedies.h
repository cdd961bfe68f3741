/// @file
/// The OOM remedies as switches of chapter 4's real Trainer, through its memory seams
/// (chapters/04_training_baseline/memory_seams.h): tiled attention as an AttentionKernel, 8-bit
/// Adam and optimizer-state offload as TrainerOptimizers, and recomputation as an activation
/// policy (recomputation_policy.h). measure_remedies() trains with a set of them and reads the
/// tracker; predict_remedies() says what that tracker will read, from the formulas alone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "chapters/04_training_baseline/memory_seams.h"
#include "chapters/04_training_baseline/trainer.h"
#include "chapters/09_memory_accounting/adam_8bit.h"
#include "chapters/09_memory_accounting/flash_attention.h"
#include "chapters/09_memory_accounting/offload.h"
#include "chapters/09_memory_accounting/recomputation_policy.h"
#include "common/memory.h"

namespace book::mem {

/// Chapter 9's tiled attention (flash_attention.h) behind chapter 4's attention seam: it saves
/// one log-sum-exp per row and head (B·h·T numbers) instead of the B·h·T·T probabilities, and its
/// scratch reports to `tracker` under kOther while a call runs.
template <typename T>
class TiledAttention final : public train::AttentionKernel<T> {
 public:
  /// Tiles of `tile` rows (>= 1, else book::Error naming the value); scratch to `tracker`.
  explicit TiledAttention(int tile, MemoryTracker* tracker = nullptr);
  /// B·h·T: the log-sum-exp per row and head.
  std::size_t saved_elements(int batch, int seq_len, int heads) const override;
  /// flash_attention_forward (exercise mem.flash_attention_forward).
  void forward(const T* qkv, int batch, int seq_len, int heads, int head_size, T* saved,
               T* out) const override;
  /// flash_attention_backward.
  void backward(const T* dout, const T* qkv, const T* out, const T* saved, int batch, int seq_len,
                int heads, int head_size, T* dqkv) const override;

 private:
  int tile_;
  MemoryTracker* tracker_;
};

/// Which remedies a run switches on (each off by default: chapter 4's plain trainer).
struct Remedies {
  Recomputation recompute = Recomputation::kNone;  ///< recomputation_policy's
  bool tiled_attention = false;  ///< TiledAttention instead of chapter 4's attention
  int tile = 16;                 ///< its tile
  /// The optimizer's state (FP32 master weights in mixed precision, and the moments) on a host
  /// arena instead of the trainer's tracker (the "device").
  bool offload = false;
  bool adam_8bit = false;               ///< the moments as block-wise 8-bit codes (adam_8bit.h)
  std::int64_t adam_8bit_block = 2048;  ///< elements per quantisation block
};

/// Bytes of chapter 4's Trainer with `options` and `remedies`, by category, from formulas
/// (book_model.h's, with each remedy's change): `device` is what the trainer's tracker peaks at
/// per category, `host` what the host arena holds (offload only).
struct RemedyPrediction {
  MemorySnapshot device;  ///< peak per category on the trainer's tracker
  MemorySnapshot host;    ///< held on the host arena (all zero without offload)
};
/// Throws book::Error for remedies that cannot run (tile < 1, a block < 1) and for options the
/// Trainer refuses (train::check_trainable).
RemedyPrediction predict_remedies(const train::TrainOptions& options, const Remedies& remedies);

/// What a run with remedies measured.
struct RemedyMeasurement {
  MemorySnapshot device;             ///< peak per category on the trainer's tracker
  std::size_t device_peak = 0;       ///< the tracker's peak_total()
  MemorySnapshot host;               ///< peak per category on the host arena
  std::vector<float> losses;         ///< each step's loss
  std::vector<float> final_weights;  ///< the weights the forward reads after the last step
  MovedBytes moved;                  ///< bytes across the link (offload only)
  double seconds_per_step = 0;       ///< wall-clock mean (printed, never asserted)
};

/// Builds chapter 4's Trainer with `options` and `remedies` on a fresh tracker (and a host arena),
/// runs `steps` optimizer steps and returns what the trackers saw.
RemedyMeasurement measure_remedies(const train::TrainOptions& options, const Remedies& remedies,
                                   int steps);

/// Mixed-precision AdamW for the Trainer with its 8-bit moments (adam_8bit.h), reported to the
/// tracker under kOptimizerStates (2 bytes per parameter + 8 per block). Weight decay applies where
/// the layout says so, before the 8-bit update (which then runs with none): the same decoupled
/// decay as chapter 4's adamw_update.
class Adam8bitOptimizer final : public train::TrainerOptimizer {
 public:
  /// Zero moments for `layout`'s parameters in blocks of `block` elements (>= 1, else
  /// book::Error naming the value).
  Adam8bitOptimizer(const train::ParameterLayout& layout, std::int64_t block,
                    MemoryTracker* tracker);
  ~Adam8bitOptimizer() override;
  Adam8bitOptimizer(const Adam8bitOptimizer&) = delete;             ///< Owns a report.
  Adam8bitOptimizer& operator=(const Adam8bitOptimizer&) = delete;  ///< Owns a report.
  /// Decay by the layout, then mem::adam8bit_step.
  void update(std::span<float> master, std::span<const float> grads, float lr,
              const train::AdamWConfig& config) override;
  const Adam8bitState& state() const { return state_; }  ///< the 8-bit moments

 private:
  const train::ParameterLayout* layout_;
  Adam8bitState state_;
  MemoryTracker* tracker_;
};

/// ZeRO-Offload's split for the Trainer: the FP32 master weights (mixed precision), the moments
/// (FP32 or 8-bit) and the FP32 gradients the update reads live on `host`; each update counts
/// the 16-bit gradients coming over (2 B/param; 4 in FP32) and the 16-bit weights going back
/// (the trainer encodes them from these master weights after the update).
class OffloadOptimizer final : public train::TrainerOptimizer {
 public:
  /// State for `layout`'s parameters on `host`; book::Error when the host arena is too small, or
  /// for eight_bit with a block < 1.
  OffloadOptimizer(const train::ParameterLayout& layout, BudgetedArena& host, bool mixed,
                   bool eight_bit, std::int64_t block);
  ~OffloadOptimizer() override;
  OffloadOptimizer(const OffloadOptimizer&) = delete;             ///< Owns buffers.
  OffloadOptimizer& operator=(const OffloadOptimizer&) = delete;  ///< Owns buffers.
  /// Gradients to the host (counted), AdamW there, weights back (counted).
  void update(std::span<float> master, std::span<const float> grads, float lr,
              const train::AdamWConfig& config) override;
  /// The host's master weights (mixed precision; empty in FP32, where the weights are their own).
  std::span<float> master_weights() override { return master_.span(); }
  const MovedBytes& moved() const { return moved_; }  ///< bytes across the link so far

 private:
  const train::ParameterLayout* layout_;
  BudgetedArena* host_;
  bool mixed_;
  TrackedBuffer<float> master_, host_grads_;
  std::unique_ptr<train::AdamWState> adam_;   // FP32 moments on the host
  std::unique_ptr<Adam8bitOptimizer> adam8_;  // or 8-bit ones
  MovedBytes moved_;
};

}  // namespace book::mem
