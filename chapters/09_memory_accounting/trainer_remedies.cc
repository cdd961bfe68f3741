// The OOM remedies behind chapter 4's memory seams; see trainer_remedies.h.
#include "chapters/09_memory_accounting/trainer_remedies.h"

#include <algorithm>
#include <chrono>
#include <limits>

#include "chapters/04_training_baseline/adamw_state.h"
#include "chapters/04_training_baseline/data.h"
#include "chapters/09_memory_accounting/book_model.h"
#include "common/check.h"

namespace book::mem {
namespace {

// 8-bit moments: one byte each of m and v per parameter, one FP32 scale each per block.
std::size_t adam_8bit_bytes(std::size_t parameters, std::int64_t block) {
  const std::size_t blocks = (parameters + block - 1) / static_cast<std::size_t>(block);
  return 2 * parameters + 2 * blocks * sizeof(float);
}

// `block`, checked first: Adam8bitOptimizer's initialiser list divides by it.
std::int64_t checked_block(std::int64_t block, const char* who) {
  BOOK_CHECK(block >= 1, who << ": block must be >= 1, got " << block << " (try 2048)");
  return block;
}

void check_remedies(const Remedies& r) {
  BOOK_CHECK(!r.tiled_attention || r.tile >= 1,
             "Remedies: tile must be >= 1, got " << r.tile << " (try 16)");
  BOOK_CHECK(!r.adam_8bit || r.adam_8bit_block >= 1,
             "Remedies: adam_8bit_block must be >= 1, got " << r.adam_8bit_block << " (try 2048)");
}

}  // namespace

template <typename T>
TiledAttention<T>::TiledAttention(int tile, MemoryTracker* tracker)
    : tile_(tile), tracker_(tracker) {
  BOOK_CHECK(tile >= 1, "TiledAttention: tile must be >= 1, got " << tile << " (try 16)");
}

template <typename T>
std::size_t TiledAttention<T>::saved_elements(int batch, int seq_len, int heads) const {
  return static_cast<std::size_t>(batch) * heads * seq_len;
}

//! [tiled_kernel]
template <typename T>
void TiledAttention<T>::forward(const T* qkv, int batch, int seq_len, int heads, int head_size,
                                T* saved, T* out) const {
  const FlashShape shape{batch, seq_len, heads, head_size, tile_};
  flash_attention_forward(qkv, shape, out, saved, tracker_);  // saved = lse [B, h, T]
}

template <typename T>
void TiledAttention<T>::backward(const T* dout, const T* qkv, const T* out, const T* saved,
                                 int batch, int seq_len, int heads, int head_size, T* dqkv) const {
  const FlashShape shape{batch, seq_len, heads, head_size, tile_};
  flash_attention_backward(dout, qkv, out, saved, shape, dqkv, tracker_);
}
//! [tiled_kernel]

template class TiledAttention<float>;
template class TiledAttention<double>;

Adam8bitOptimizer::Adam8bitOptimizer(const train::ParameterLayout& layout, std::int64_t block,
                                     MemoryTracker* tracker)
    : layout_(&layout),
      state_(layout.total(), checked_block(block, "Adam8bitOptimizer")),
      tracker_(tracker) {
  // The codes and scales live in std::vectors: report their bytes as the GPU tensors they stand
  // for, and release them when the optimizer goes.
  if (tracker_ != nullptr) tracker_->allocate(MemoryCategory::kOptimizerStates, state_.bytes());
}

Adam8bitOptimizer::~Adam8bitOptimizer() {
  if (tracker_ != nullptr) tracker_->release(MemoryCategory::kOptimizerStates, state_.bytes());
}

//! [adam8bit_optimizer]
void Adam8bitOptimizer::update(std::span<float> master, std::span<const float> grads, float lr,
                               const train::AdamWConfig& config) {
  // Decoupled decay where the layout says so: w − lr·wd·w first, then the Adam step with wd = 0,
  // is AdamW's w − lr·(update + wd·w) with the decay taken from the same (old) weight.
  const float shrink = 1.0f - lr * config.weight_decay;
  for (const auto& slot : layout_->slots())
    if (slot.decay)
      for (std::size_t i = slot.offset; i < slot.offset + slot.size(); ++i) master[i] *= shrink;
  train::AdamWConfig no_decay = config;
  no_decay.weight_decay = 0;
  adam8bit_step(master, grads, state_, lr, no_decay);
}
//! [adam8bit_optimizer]

OffloadOptimizer::OffloadOptimizer(const train::ParameterLayout& layout, BudgetedArena& host,
                                   bool mixed, bool eight_bit, std::int64_t block)
    : layout_(&layout), host_(&host), mixed_(mixed) {
  if (eight_bit) checked_block(block, "OffloadOptimizer");  // before anything is allocated
  const std::size_t n = layout.total();
  if (mixed) master_ = host.allocate<float>(n, MemoryCategory::kMasterWeights);
  if (eight_bit)
    adam8_ = std::make_unique<Adam8bitOptimizer>(layout, block, &host.tracker());
  else
    adam_ = std::make_unique<train::AdamWState>(0, n, &host.tracker());
  host_grads_ = host.allocate<float>(n, MemoryCategory::kOther);  // what the CPU's update reads
}

OffloadOptimizer::~OffloadOptimizer() = default;

//! [offload_optimizer]
void OffloadOptimizer::update(std::span<float> master, std::span<const float> grads, float lr,
                              const train::AdamWConfig& config) {
  // On a GPU the 16-bit gradients cross PCIe (4 bytes each in FP32), are widened on the host,
  // and the new 16-bit weights cross back once the host's Adam has run.
  const std::size_t wire = mixed_ ? sizeof(std::uint16_t) : sizeof(float);
  std::copy(grads.begin(), grads.end(), host_grads_.begin());
  moved_.to_host += grads.size() * wire;
  if (adam8_)
    adam8_->update(master, host_grads_.span(), lr, config);
  else
    train::adamw_update(*layout_, *adam_, master, host_grads_.span(), lr, config);
  moved_.to_device += master.size() * wire;
}
//! [offload_optimizer]

RemedyPrediction predict_remedies(const train::TrainOptions& options, const Remedies& r) {
  train::check_trainable(options, "predict_remedies");  // what the Trainer would refuse
  check_remedies(r);
  RemedyPrediction p;
  p.device = predict_trainer_memory(options);  // the plain trainer, then each remedy's change
  train::Config c = options.model;
  const train::AdditionTask task(options.digits);
  c.vocab_size = train::AdditionTask::vocab_size();
  c.context = task.model_context();
  const std::size_t psi = static_cast<std::size_t>(c.parameter_count());
  const std::size_t L = c.n_layer, T = c.context, a = c.n_head;
  const std::size_t rows = static_cast<std::size_t>(options.micro_batch) * T;
  const bool mixed = options.precision != DType::kF32;
  auto& device = p.device.bytes;
  auto& host = p.host.bytes;
  const auto at = [](MemoryCategory category) { return static_cast<std::size_t>(category); };

  //! [remedy_prediction]
  // A block's activations: what it keeps besides the attention core's saved numbers, and those
  // (a·T probabilities per row, or a log-sum-exp per row and head when tiled).
  const std::size_t per_block =
      rows * sizeof(float) *
      (3 * c.d_model + 4 + 4 * c.d_model + 2 * static_cast<std::size_t>(c.d_ff()));
  const std::size_t saved_plain = rows * a * T * sizeof(float);
  const std::size_t saved = r.tiled_attention ? rows * a * sizeof(float) : saved_plain;
  const std::size_t blocks_kept = r.recompute == Recomputation::kFull ? 1 : L;
  const std::size_t saved_kept = r.recompute == Recomputation::kNone ? L : 1;
  device[at(MemoryCategory::kActivations)] -= L * (per_block + saved_plain);
  device[at(MemoryCategory::kActivations)] += blocks_kept * per_block + saved_kept * saved;
  // The tiled kernel's scratch lives only during a call: the larger of forward's and backward's.
  if (r.tiled_attention) {
    const FlashShape shape{options.micro_batch, static_cast<int>(T), static_cast<int>(a),
                           c.head_size(), r.tile};
    device[at(MemoryCategory::kOther)] +=
        std::max(flash_forward_scratch_bytes(shape, 4), flash_backward_scratch_bytes(shape, 4));
  }
  // The optimizer: 8-bit moments instead of FP32 ones, and with offload all of its state (and
  // the FP32 gradients the CPU's update reads) on the host.
  const std::size_t moments = r.adam_8bit ? adam_8bit_bytes(psi, r.adam_8bit_block) : 8 * psi;
  device[at(MemoryCategory::kOptimizerStates)] = r.offload ? 0 : moments;
  if (r.offload) {
    if (mixed) device[at(MemoryCategory::kMasterWeights)] = 0;
    host[at(MemoryCategory::kMasterWeights)] = mixed ? 4 * psi : 0;
    host[at(MemoryCategory::kOptimizerStates)] = moments;
    host[at(MemoryCategory::kOther)] = 4 * psi;
  }
  //! [remedy_prediction]
  return p;
}

RemedyMeasurement measure_remedies(const train::TrainOptions& options, const Remedies& r,
                                   int steps) {
  check_remedies(r);
  BOOK_CHECK(steps >= 1, "measure_remedies: steps must be >= 1, got " << steps);
  MemoryTracker device;
  BudgetedArena host("host", std::numeric_limits<std::size_t>::max());
  TiledAttention<float> tiled(r.tiled_attention ? r.tile : 1, &device);
  OffloadOptimizer* offload = nullptr;
  train::TrainOptions o = options;
  o.activation_policy = recomputation_policy<float>(r.recompute);
  if (r.tiled_attention) o.attention = &tiled;
  const bool mixed = options.precision != DType::kF32;
  if (r.offload)
    o.optimizer = [&](const train::ParameterLayout& layout, MemoryTracker*) {
      auto made =
          std::make_unique<OffloadOptimizer>(layout, host, mixed, r.adam_8bit, r.adam_8bit_block);
      offload = made.get();
      return std::unique_ptr<train::TrainerOptimizer>(std::move(made));
    };
  else if (r.adam_8bit)
    o.optimizer = [&](const train::ParameterLayout& layout, MemoryTracker* tracker) {
      return std::unique_ptr<train::TrainerOptimizer>(
          std::make_unique<Adam8bitOptimizer>(layout, r.adam_8bit_block, tracker));
    };
  RemedyMeasurement m;
  {
    train::Trainer trainer(o, &device);
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < steps; ++i) m.losses.push_back(trainer.step().loss);
    m.seconds_per_step =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / steps;
    const std::span<const float> weights = trainer.model().params().span();
    m.final_weights.assign(weights.begin(), weights.end());
    if (offload) m.moved = offload->moved();
  }
  for (MemoryCategory category : all_memory_categories()) {
    m.device.bytes[static_cast<std::size_t>(category)] = device.peak(category);
    m.host.bytes[static_cast<std::size_t>(category)] = host.tracker().peak(category);
  }
  m.device_peak = device.peak_total();
  return m;
}

}  // namespace book::mem
