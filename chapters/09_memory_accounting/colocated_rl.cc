// Colocated RL memory: a ledger that charges each phase's allocations against one budget; see
// colocated_rl.h.
#include "chapters/09_memory_accounting/colocated_rl.h"

#include <algorithm>
#include <limits>
#include <sstream>

#include "common/check.h"

namespace book::mem {
namespace {

constexpr const char* kState = "training state";
constexpr const char* kActivations = "training activations";
constexpr const char* kWeights = "inference weights";
constexpr const char* kPool = "KV pool";

// One GPU's memory: named holdings charged against a budget, the peak remembered.
class Ledger {
 public:
  Ledger(std::uint64_t budget, RlPlacement placement) : budget_(budget), placement_(placement) {}

  void charge(const std::string& phase, const char* what, std::uint64_t bytes) {
    if (bytes > budget_ || total_ > budget_ - bytes) {
      std::ostringstream in_use;
      for (const auto& [name, held] : live_) in_use << ", " << name << " " << held << " B";
      BOOK_CHECK(false, rl_placement_name(placement_)
                            << ", " << phase << ": the " << what << " (" << bytes
                            << " B) does not fit: " << total_ << " B of the budget " << budget_
                            << " B are in use" << in_use.str()
                            << " (a smaller KV pool, more sharding of the training state, or "
                               "time-slicing the phases)");
    }
    live_[what] += bytes;
    total_ += bytes;
    peak_ = std::max(peak_, total_);
  }
  void refund(const char* what) {
    total_ -= live_[what];
    live_.erase(what);
  }
  RlPhase snapshot(std::string name, std::uint64_t host) const {
    return {std::move(name), live_, total_, host};
  }
  std::uint64_t peak() const { return peak_; }

 private:
  std::uint64_t budget_;
  RlPlacement placement_;
  std::map<std::string, std::uint64_t> live_;
  std::uint64_t total_ = 0, peak_ = 0;
};

// a + b, or a book::Error when it overflows 64 bits.
std::uint64_t add(std::uint64_t a, std::uint64_t b, const char* what) {
  BOOK_CHECK(a <= std::numeric_limits<std::uint64_t>::max() - b,
             "RlMemorySetup: " << what << " overflows 64 bits; the sizes are absurd");
  return a + b;
}

}  // namespace

std::uint64_t smallest_budget(const RlMemorySetup& setup, RlPlacement placement) {
  RlMemorySetup s = setup;
  s.kv_blocks = 1;
  s.budget = 1;  // validate() wants one; the budget is what is computed here
  s.validate();
  // One block beside what the pool shares the GPU with; time-sliced, the training phase too.
  const std::uint64_t block = static_cast<std::uint64_t>(s.block_size) * s.kv_bytes_per_token;
  if (placement == RlPlacement::kColocated)
    return s.training_state + s.training_activations + s.inference_weights + block;
  return std::max(s.inference_weights + block, s.training_state + s.training_activations);
}

const char* rl_placement_name(RlPlacement placement) {
  return placement == RlPlacement::kColocated ? "colocated" : "time-sliced";
}

std::uint64_t RlMemorySetup::kv_pool() const {
  return static_cast<std::uint64_t>(kv_blocks) * static_cast<std::uint64_t>(block_size) *
         kv_bytes_per_token;
}

void RlMemorySetup::validate() const {
  BOOK_CHECK(budget > 0, "RlMemorySetup: budget must be > 0 bytes");
  BOOK_CHECK(block_size >= 1, "RlMemorySetup: block_size must be >= 1, got " << block_size);
  BOOK_CHECK(kv_blocks >= 1, "RlMemorySetup: kv_blocks must be >= 1, got " << kv_blocks);
  BOOK_CHECK(kv_bytes_per_token > 0, "RlMemorySetup: kv_bytes_per_token must be > 0");
  const std::uint64_t most = std::numeric_limits<std::uint64_t>::max();
  BOOK_CHECK(static_cast<std::uint64_t>(kv_blocks) <=
                 most / static_cast<std::uint64_t>(block_size) / kv_bytes_per_token,
             "RlMemorySetup: the KV pool (" << kv_blocks << " blocks of " << block_size
                                            << " tokens) overflows 64 bits; the sizes are absurd");
  // Time-sliced moves the state off and back each cycle: 2·training_state must not wrap.
  BOOK_CHECK(training_state <= most / 2, "RlMemorySetup: training_state "
                                             << training_state
                                             << " B is above 2^63 B; moving it off and back "
                                                "overflows 64 bits; the sizes are absurd");
  add(add(add(training_state, training_activations, "the training state"), inference_weights,
          "the inference weights"),
      kv_pool(), "the KV pool");
}

//! [rl_cycle]
RlPlan run_rl_memory(const RlMemorySetup& s, RlPlacement placement, int cycles) {
  s.validate();
  BOOK_CHECK(cycles >= 1, "run_rl_memory: cycles must be >= 1, got " << cycles);
  RlPlan plan;
  plan.placement = placement;
  Ledger gpu(s.budget, placement);
  const bool sliced = placement == RlPlacement::kTimeSliced;
  std::uint64_t host = 0;
  // The job starts with the trainer's state on the GPU (it initialised or loaded it there).
  gpu.charge("start", kState, s.training_state);
  for (int cycle = 1; cycle <= cycles; ++cycle) {
    const std::string n = std::to_string(cycle);
    // Rollout: the engine needs its weights (synchronised from the trained ones) and a KV pool.
    if (sliced) {  // the training state goes to the host first, so the pool can have its room
      gpu.refund(kState);
      host = s.training_state;
      plan.host_peak = host;
    }
    if (sliced || cycle == 1) {
      gpu.charge("rollout " + n, kWeights, s.inference_weights);
      gpu.charge("rollout " + n, kPool, s.kv_pool());
    }
    plan.phases.push_back(gpu.snapshot("rollout " + n, host));
    // Training: the state back (time-sliced), the engine's memory freed, activations for the step.
    if (sliced) {
      gpu.refund(kPool);
      gpu.refund(kWeights);
      gpu.charge("training " + n, kState, s.training_state);
      host = 0;
    }
    gpu.charge("training " + n, kActivations, s.training_activations);
    plan.phases.push_back(gpu.snapshot("training " + n, host));
    gpu.refund(kActivations);
  }
  plan.device_peak = gpu.peak();
  plan.moved_per_cycle = sliced ? 2 * s.training_state : 0;
  plan.sync_per_cycle = s.inference_weights;  // new weights into the engine every cycle, either way
  return plan;
}
//! [rl_cycle]

std::int64_t max_kv_blocks(const RlMemorySetup& setup, RlPlacement placement) {
  RlMemorySetup s = setup;
  s.kv_blocks = 1;
  s.validate();
  // What the pool must share the GPU with at its peak phase.
  const std::uint64_t beside = placement == RlPlacement::kColocated
                                   ? s.training_state + s.training_activations + s.inference_weights
                                   : s.inference_weights;
  const std::uint64_t per_block = static_cast<std::uint64_t>(s.block_size) * s.kv_bytes_per_token;
  if (beside >= s.budget) return 0;
  const std::uint64_t fit = (s.budget - beside) / per_block;
  // A count is an int64: more blocks than that (a 1-byte block in a 2^64-byte budget) is refused,
  // not cast to a negative number.
  BOOK_CHECK(fit <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()),
             "max_kv_blocks: the budget " << s.budget << " B holds " << fit << " KV blocks of "
                                          << per_block
                                          << " B, above 2^63 - 1; the sizes are absurd");
  const auto blocks = static_cast<std::int64_t>(fit);
  // Time-sliced: the training phase must fit too, or no pool helps.
  if (placement == RlPlacement::kTimeSliced && s.training_state + s.training_activations > s.budget)
    return 0;
  return blocks;
}

}  // namespace book::mem
