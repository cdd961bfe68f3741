// The stage's section "Measured = predicted": chapter 4's Trainer, one step, each memory category
// measured by the tracker next to the formula's prediction; gradient accumulation on the same
// trainer; chapter 6's ZeRO trainer against the calculator's per-rank model state.
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "chapters/03_collectives/threads.h"
#include "chapters/06_zero/zero_trainer.h"
#include "chapters/09_memory_accounting/book_model.h"
#include "chapters/09_memory_accounting/model_states.h"
#include "chapters/09_memory_accounting/stage.h"
#include "common/table.h"

namespace book::mem::stage {
namespace {

// (1) measured = predicted on chapter 4's Trainer.
Table measured_table(int steps, bool* all_equal) {
  Table t({"precision", "micro-batch", "category", "measured B", "predicted B", "equal"});
  for (DType p : {DType::kF32, DType::kBF16, DType::kF16}) {
    for (int micro_batch : {8, 32}) {
      train::TrainOptions o;
      o.precision = p;
      o.micro_batch = micro_batch;
      const MemorySnapshot measured = measure_trainer_memory(o, steps);
      const MemorySnapshot predicted = predict_trainer_memory(o);
      for (MemoryCategory c : all_memory_categories()) {
        const bool equal = measured[c] == predicted[c];
        *all_equal = *all_equal && equal;
        t.add_row({dtype_name(p), std::to_string(micro_batch), memory_category_name(c),
                   std::to_string(measured[c]), std::to_string(predicted[c]),
                   equal ? "yes" : "NO"});
      }
    }
  }
  return t;
}

// (1b) ZeRO stages 0-2 on chapter 6's trainer (thread ranks, one bucket, BF16): the largest rank's
// model state against the calculator's zero_model_states for the same shape on a DP = N grid.
Table zero_table(bool* all_equal) {
  Table t({"stage", "N", "measured B (params/grads/master/optimizer)", "predicted B", "equal"});
  train::TrainOptions o;
  o.precision = DType::kBF16;
  o.micro_batch = 12;
  for (zero::Stage stage : {zero::Stage::kDdp, zero::Stage::kZero1, zero::Stage::kZero2}) {
    for (int n : {2, 4}) {
      zero::ZeroOptions options;
      options.train = o;
      options.stage = stage;
      options.bucket_bytes = std::size_t{1} << 30;  // one bucket: the largest rank owns ⌈Ψ/N⌉
      std::vector<zero::ModelStateBytes> measured(static_cast<std::size_t>(n));
      coll::run_ranks(n, [&](coll::Communicator& comm) {
        MemoryTracker tracker;
        zero::ZeroTrainer trainer(comm, options, &tracker);
        trainer.step();
        measured[static_cast<std::size_t>(comm.rank())] = trainer.measured_model_state();
      });
      zero::ModelStateBytes largest;
      for (const zero::ModelStateBytes& m : measured)
        if (m.total() > largest.total()) largest = m;
      Parallelism par;
      par.dp = n;
      par.stage = stage;
      const zero::ModelStateBytes predicted = zero_model_states(preset("book"), par, o.precision);
      const auto cells = [](const zero::ModelStateBytes& b) {
        return std::to_string(b.parameters) + "/" + std::to_string(b.gradients) + "/" +
               std::to_string(b.master_weights) + "/" + std::to_string(b.optimizer_states);
      };
      *all_equal = *all_equal && largest == predicted;
      t.add_row({zero::stage_name(stage), std::to_string(n), cells(largest), cells(predicted),
                 largest == predicted ? "yes" : "NO"});
    }
  }
  return t;
}

}  // namespace

TourLines measured_section(const StageOptions& options) {
  std::cout << "## Measured = predicted: chapter 4's Trainer, one step, peak bytes per "
               "category\n\n";
  std::cerr << "memory: measuring 6 configurations of the book's model ...\n";
  bool all_equal = true;
  const Table measured = measured_table(options.steps, &all_equal);
  std::cout << measured.markdown() << "\n";

  // Gradient accumulation on the real trainer: micro-batch 32 vs 8 x 4 (same tokens per step).
  train::TrainOptions big, small;
  big.precision = small.precision = DType::kBF16;
  big.micro_batch = 32;
  small.micro_batch = 8;
  small.accumulation = 4;
  const MemorySnapshot m_big = measure_trainer_memory(big), m_small = measure_trainer_memory(small);
  std::cout << "measured, book model bf16: micro-batch 32 x 1 -> 8 x 4 (accumulation): "
            << "activations " << m_big[MemoryCategory::kActivations] << " -> "
            << m_small[MemoryCategory::kActivations] << " B, peak total " << m_big.total() << " -> "
            << m_small.total() << " B\n\n";

  std::cerr << "memory: chapter 6's ZeRO trainer at N = 2, 4 ...\n";
  bool zero_equal = true;
  const Table zero_measured = zero_table(&zero_equal);
  std::cout << "## Measured = predicted across ZeRO stages: chapter 6's trainer, BF16, largest "
               "rank\n\n"
            << zero_measured.markdown() << "\n";

  const std::string dir = results_dir();
  measured.write_csv(dir + "/ch09_measured.csv");
  measured.write_json(dir + "/ch09_measured.json");
  zero_measured.write_csv(dir + "/ch09_zero.csv");

  std::ostringstream tour;
  tour << "tour: 09 | book model, one step: measured vs predicted bytes, 7 categories x "
          "{f32,bf16,f16} x micro-batch {8,32} | equal: "
       << (all_equal ? "yes" : "NO")
       << " | the inventory is complete: 16 B/param + activations + workspace\n";
  tour << "tour: 09 | chapter 6's ZeRO trainer, stages 0-2 x N = 2, 4 (bf16): largest rank's "
          "model state vs calculator | equal: "
       << (zero_equal ? "yes" : "NO")
       << " | the calculator's per-rank formula is the trainer's, byte for byte\n";
  tour << "tour: 09 | book model bf16, micro-batch 32 -> 8 x 4 accumulation | activations "
       << m_big[MemoryCategory::kActivations] << " -> " << m_small[MemoryCategory::kActivations]
       << " B | gradient accumulation cuts activations by the micro-batch ratio\n";
  return tour.str();
}

}  // namespace book::mem::stage
