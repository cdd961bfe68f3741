// The book's model: each memory category predicted from formulas, and measured.
#include "chapters/09_memory_accounting/book_model.h"

#include "chapters/04_training_baseline/data.h"
#include "chapters/09_memory_accounting/dp_states.h"

namespace book::mem {

MemorySnapshot predict_trainer_memory(const train::TrainOptions& options) {
  // What the Trainer refuses is refused here too: a micro-batch of -1 priced exabytes.
  train::check_trainable(options, "predict_trainer_memory");
  train::Config c = options.model;
  const train::AdditionTask task(options.digits);
  c.vocab_size = train::AdditionTask::vocab_size();
  c.context = task.model_context();
  c.validate();
  const std::uint64_t psi = static_cast<std::uint64_t>(c.parameter_count());
  const zero::ModelStateBytes states =
      dp_model_states(psi, 1, zero::Stage::kDdp, options.precision);

  //! [book_activations]
  const std::uint64_t L = c.n_layer, C = c.d_model, V = c.vocab_size, T = c.context, a = c.n_head,
                      f = c.d_ff();
  const std::uint64_t rows = static_cast<std::uint64_t>(options.micro_batch) * T;
  const std::uint64_t per_block = 3 * C + 4 + 4 * C + 2 * f + a * T;
  const std::uint64_t per_row = 2 * (L + 1) * C + L * per_block + C + 2 + 2 * V;
  const std::uint64_t activations = rows * (per_row * sizeof(float) + 2 * sizeof(int));
  //! [book_activations]
  const std::uint64_t workspace = rows * (3 * C + 2 * f + C + 3 * C + V + C) * sizeof(float);
  const bool mixed = options.precision != DType::kF32;

  MemorySnapshot s;
  const auto set = [&](MemoryCategory category, std::uint64_t bytes) {
    s.bytes[static_cast<std::size_t>(category)] = bytes;
  };
  set(MemoryCategory::kParameters, states.parameters);
  set(MemoryCategory::kGradients, states.gradients);
  set(MemoryCategory::kMasterWeights, states.master_weights);
  set(MemoryCategory::kOptimizerStates, states.optimizer_states);
  set(MemoryCategory::kActivations, activations);
  set(MemoryCategory::kOther, workspace + (mixed ? 8 * psi : 0));
  return s;
}

MemorySnapshot measure_trainer_memory(const train::TrainOptions& options, int steps) {
  MemoryTracker tracker;
  train::Trainer trainer(options, &tracker);
  for (int i = 0; i < steps; ++i) trainer.step();
  MemorySnapshot s;
  for (MemoryCategory category : all_memory_categories())
    s.bytes[static_cast<std::size_t>(category)] = tracker.peak(category);
  return s;
}

}  // namespace book::mem
