/// @file
/// Colocated RL memory: one GPU's budget shared by a training state (16 bytes per parameter of
/// the shard it trains: 16-bit weights and gradients, FP32 master weights, Adam's m and v) and an
/// inference engine (its 16-bit weights and a KV pool of blocks, chapter 10's paged layout), which
/// alternate: rollout (generate with the engine), then training (a step on what was generated).
///
/// Two placements. <b>Colocated</b>: both stay resident all the time, so the KV pool gets what
/// the training state and its activations leave. <b>Time-sliced</b> (what colocated RL systems
/// do between phases): during rollout the training state is offloaded to host memory; during
/// training the KV pool is freed and the engine's weights are dropped (they are synchronised from
/// the trained weights at the next rollout). The peak is then the larger phase, not the sum, at the
/// price of moving the training state off and back each cycle.
///
/// A ledger charges every allocation against the budget and refuses one that would exceed it,
/// with a book::Error naming what does not fit and what holds the memory.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace book::mem {

/// What one GPU of an RL job holds, in bytes.
struct RlMemorySetup {
  std::uint64_t budget = 0;                ///< the GPU's memory
  std::uint64_t training_state = 0;        ///< 16 B/param of the shard this GPU trains
  std::uint64_t training_activations = 0;  ///< a training micro-batch's activations
  std::uint64_t inference_weights = 0;     ///< the engine's 16-bit weights (2 B/param / TP)
  std::uint64_t kv_bytes_per_token = 0;    ///< 2 · layers · kv heads · head dim · bytes (/ TP)
  int block_size = 16;                     ///< tokens per KV block
  std::int64_t kv_blocks = 0;              ///< blocks in the engine's pool

  /// kv_blocks · block_size · kv_bytes_per_token.
  std::uint64_t kv_pool() const;
  /// Throws book::Error naming the first field that is not usable (a zero budget, a block size
  /// or a block count below 1, a zero per-token size, sums that overflow 64 bits, a training state
  /// above 2^63 bytes, whose move off and back would).
  void validate() const;
};

/// Where the training state lives during rollout.
enum class RlPlacement {
  kColocated,   ///< everything resident in both phases
  kTimeSliced,  ///< training state offloaded during rollout; KV pool and engine freed in training
};

/// "colocated" or "time-sliced".
const char* rl_placement_name(RlPlacement placement);

/// Bytes live on the GPU (and the host) at the end of one phase, by what holds them.
struct RlPhase {
  std::string name;                             ///< "rollout 1", "training 1", ...
  std::map<std::string, std::uint64_t> device;  ///< what holds the GPU's memory
  std::uint64_t device_total = 0;               ///< their sum
  std::uint64_t host_total = 0;                 ///< the offloaded training state
};

/// A run of `cycles` rollout + training cycles.
struct RlPlan {
  RlPlacement placement = RlPlacement::kColocated;  ///< how it was placed
  std::vector<RlPhase> phases;                      ///< each phase, in order
  std::uint64_t device_peak = 0;                    ///< the most the GPU held at any moment
  std::uint64_t host_peak = 0;                      ///< the most the host held
  std::uint64_t moved_per_cycle = 0;  ///< bytes between GPU and host per cycle (offload and back)
  std::uint64_t sync_per_cycle = 0;   ///< bytes copied into the engine's weights per cycle
};

/// Runs `cycles` (>= 1) cycles of `setup` with `placement` through the ledger. Throws
/// book::Error when an allocation would exceed the budget, naming the phase, what does not fit,
/// its bytes, and what is in use.
RlPlan run_rl_memory(const RlMemorySetup& setup, RlPlacement placement, int cycles = 2);

/// The most KV blocks `setup` can give its engine under `placement` (setup.kv_blocks ignored):
/// one more would not fit the budget. 0 when not even the rest fits. Throws book::Error for a
/// setup validate() refuses, and when the count is above 2^63 − 1 (absurd sizes).
std::int64_t max_kv_blocks(const RlMemorySetup& setup, RlPlacement placement);

/// The smallest budget (setup.budget and kv_blocks ignored) at which max_kv_blocks(setup,
/// placement) is at least 1: what a GPU must hold for one KV block beside the rest.
std::uint64_t smallest_budget(const RlMemorySetup& setup, RlPlacement placement);

}  // namespace book::mem
