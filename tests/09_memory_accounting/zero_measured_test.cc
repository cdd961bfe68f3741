// Measured = predicted across ZeRO stages and N: chapter 6's ZeroTrainer on thread ranks (chapter
// 5's tiny model, one bucket so the largest rank owns exactly ⌈Ψ/N⌉), the largest rank's model
// state by the tracker after two steps, against the calculator's zero_model_states for the same
// shape on a DP = N grid — every category, to the byte, in FP32 and BF16.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "chapters/03_collectives/threads.h"
#include "chapters/04_training_baseline/data.h"
#include "chapters/06_zero/zero_trainer.h"
#include "chapters/09_memory_accounting/model_states.h"

namespace book::mem {
namespace {

train::TrainOptions tiny(DType precision) {
  train::TrainOptions o;
  o.model.n_layer = 2;
  o.model.n_head = 2;
  o.model.d_model = 16;
  o.digits = 2;
  o.micro_batch = 12;  // global: 2, 3 and 4 ranks divide it
  o.total_steps = 10;
  o.warmup_steps = 1;
  o.precision = precision;
  return o;
}

TEST(ZeroMeasuredEqualsPredicted, EveryStageAndRankCount) {
  for (DType precision : {DType::kF32, DType::kBF16}) {
    for (zero::Stage stage : {zero::Stage::kDdp, zero::Stage::kZero1, zero::Stage::kZero2}) {
      for (int n : {2, 3, 4}) {
        zero::ZeroOptions options;
        options.train = tiny(precision);
        options.stage = stage;
        options.bucket_bytes = std::size_t{1} << 30;  // one bucket
        std::vector<zero::ModelStateBytes> measured(static_cast<std::size_t>(n));
        coll::run_ranks(n, [&](coll::Communicator& comm) {
          MemoryTracker tracker;
          zero::ZeroTrainer trainer(comm, options, &tracker);
          trainer.step();
          trainer.step();
          measured[static_cast<std::size_t>(comm.rank())] = trainer.measured_model_state();
        });
        zero::ModelStateBytes largest;
        for (const zero::ModelStateBytes& m : measured)
          if (m.total() > largest.total()) largest = m;

        train::Config c = options.train.model;
        const train::AdditionTask task(options.train.digits);
        c.vocab_size = train::AdditionTask::vocab_size();
        c.context = task.model_context();
        Parallelism par;
        par.dp = n;
        par.stage = stage;
        const zero::ModelStateBytes predicted =
            zero_model_states(from_book_config(c), par, precision);
        EXPECT_EQ(largest, predicted)
            << zero::stage_name(stage) << " N=" << n << " " << dtype_name(precision)
            << ": measured " << largest.parameters << "/" << largest.gradients << "/"
            << largest.master_weights << "/" << largest.optimizer_states << ", predicted "
            << predicted.parameters << "/" << predicted.gradients << "/" << predicted.master_weights
            << "/" << predicted.optimizer_states;
      }
    }
  }
}

}  // namespace
}  // namespace book::mem
