// Optimizer-state offload between two budgeted arenas; see offload.h.
#include "chapters/09_memory_accounting/offload.h"

#include <utility>

#include "common/check.h"

namespace book::mem {

BudgetedArena::BudgetedArena(std::string name, std::size_t budget)
    : name_(std::move(name)), budget_(budget) {}

void BudgetedArena::reserve(std::size_t bytes, MemoryCategory category) const {
  const std::size_t live = tracker_.current_total();
  BOOK_CHECK(live + bytes <= budget_, name_ << " out of memory: " << bytes << " bytes of "
                                            << memory_category_name(category) << " requested with "
                                            << live << " of the budget " << budget_
                                            << " in use (offload the optimizer states, or give the "
                                            << name_ << " a larger budget)");
}

//! [offload_step]
OffloadedAdamW::OffloadedAdamW(std::span<const float> initial, BudgetedArena& device,
                               BudgetedArena& host, bool offload, train::AdamWConfig config)
    : offload_(offload), config_(config) {
  const std::size_t n = initial.size();
  BudgetedArena& state = offload ? host : device;
  weights_ = device.allocate<BFloat16>(n, MemoryCategory::kParameters);
  grads_ = device.allocate<BFloat16>(n, MemoryCategory::kGradients);
  master_ = state.allocate<float>(n, MemoryCategory::kMasterWeights);
  m_ = state.allocate<float>(n, MemoryCategory::kOptimizerStates);
  v_ = state.allocate<float>(n, MemoryCategory::kOptimizerStates);
  // The FP32 gradients the update reads are the CPU's scratch in both cases (a GPU's kernel reads
  // the 16-bit ones directly), so they are counted on the host.
  host_grads_ = host.allocate<float>(n, MemoryCategory::kOther);
  for (std::size_t i = 0; i < n; ++i) {
    master_[i] = initial[i];
    m_[i] = v_[i] = 0;
    weights_[i] = to_bf16(initial[i]);
    grads_[i] = to_bf16(0.0f);
  }
}

void OffloadedAdamW::step(float lr) {
  const std::size_t n = weights_.size();
  for (std::size_t i = 0; i < n; ++i) host_grads_[i] = to_float(grads_[i]);
  if (offload_) moved_.to_host += n * sizeof(BFloat16);  // the 16-bit gradients cross the link
  train::adamw_step(master_.span(), host_grads_.span(), m_.span(), v_.span(), ++steps_, lr,
                    config_);
  for (std::size_t i = 0; i < n; ++i) weights_[i] = to_bf16(master_[i]);
  if (offload_) moved_.to_device += n * sizeof(BFloat16);  // and the new 16-bit weights back
}
//! [offload_step]

}  // namespace book::mem
