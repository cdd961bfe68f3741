// The stage's section "Recomputation": chapter 4's blocks with their activations stored, against
// the checkpointed backward (mem.recompute_segment, one block per segment).
#include <algorithm>
#include <iostream>
#include <sstream>
#include <vector>

#include "chapters/04_training_baseline/data.h"
#include "chapters/04_training_baseline/model.h"
#include "chapters/09_memory_accounting/recompute.h"
#include "chapters/09_memory_accounting/stage.h"
#include "common/memory.h"
#include "common/rng.h"

namespace book::mem::stage {
namespace {

// Recomputation on chapter 4's blocks: a 4-block model, micro-batch 32, stored activations
// against the checkpointed backward with one block per segment; the gradients compared bit for bit.
struct RecomputeResult {
  std::size_t stored = 0, held = 0;
  bool gradients_equal = false;
};

RecomputeResult measure_recompute() {
  train::Config c;
  const train::AdditionTask task(3);
  c.vocab_size = train::AdditionTask::vocab_size();
  c.context = task.model_context();
  c.n_layer = 4;
  const int batch = 32;
  train::Model<float> model(c, batch);
  model.init(9);
  Rng rng(2);
  const train::Batch data = task.batch(rng, train::Split::kTrain, batch);
  model.forward(data.tokens.data(), data.targets.data(), batch, data.seq_len);
  model.backward();
  const std::vector<float> stored_grads(model.grads().begin(), model.grads().end());
  MemoryTracker tracker;
  RecomputeBuffers buffers(c, 1, batch, &tracker);
  model.zero_grad();
  model.forward(data.tokens.data(), data.targets.data(), batch, data.seq_len);
  checkpointed_backward(model, buffers);
  RecomputeResult r;
  r.stored = c.n_layer * train::BlockActivations<float>(c, {}, batch, c.context).bytes();
  r.held = tracker.peak(MemoryCategory::kActivations);
  r.gradients_equal = std::equal(stored_grads.begin(), stored_grads.end(), model.grads().begin());
  return r;
}

}  // namespace

TourLines recompute_section(const StageOptions&) {
  const RecomputeResult rec = measure_recompute();
  std::cout << "measured, 4-block book model, micro-batch 32: the blocks' activations stored "
            << rec.stored << " B -> recomputed (1 block per segment) " << rec.held
            << " B; gradients bit for bit: " << (rec.gradients_equal ? "yes" : "NO") << "\n\n";

  std::ostringstream tour;
  tour << "tour: 09 | 4-block model, blocks' activations stored -> full recomputation | "
       << rec.stored << " -> " << rec.held
       << " B, gradients equal: " << (rec.gradients_equal ? "yes" : "NO")
       << " | recomputation trades one extra forward (8N vs 6N FLOPs) for activations\n";
  return tour.str();
}

}  // namespace book::mem::stage
