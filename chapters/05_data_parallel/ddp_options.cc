// Checks and fingerprint of the options of a data-parallel run.
#include "chapters/05_data_parallel/ddp_options.h"

#include <cstring>
#include <vector>

#include "chapters/04_training_baseline/checkpoint.h"
#include "chapters/04_training_baseline/data.h"
#include "chapters/04_training_baseline/unsupported_seams.h"
#include "common/check.h"
#include "common/enum_check.h"

namespace book::ddp {

DdpOptions resolve(const DdpOptions& options, int world_size) {
  DdpOptions out = options;
  train::TrainOptions& t = out.train;
  BOOK_CHECK(world_size >= 1, "data parallel: the world size must be >= 1, got " << world_size);
  // Rung(0) or Algorithm(42) used to train with no gradient synchronisation and no error.
  check_enum(out.rung, Rung::kPerTensor, Rung::kNoSync, "ddp::Rung", "data parallel");
  coll::check_algorithm(out.algorithm, "data parallel");
  train::check_trainable(t, "data parallel");
  train::refuse_unsupported_seams(t, "data parallelism (chapter 5's DdpTrainer, chapter 6's ZeRO)");
  BOOK_CHECK(t.micro_batch % world_size == 0,
             "data parallel: the global micro-batch of "
                 << t.micro_batch << " sequences is not divisible by " << world_size
                 << " ranks: every rank must run the same number of sequences; use a multiple of "
                 << world_size << " (e.g. " << (t.micro_batch / world_size + 1) * world_size
                 << ")");
  BOOK_CHECK(out.bucket_bytes > 0,
             "bucket size 0 bytes: a bucket must hold at least one element; "
             "PyTorch's default is 25 MiB (bucket_cap_mb=25)");
  const int per_node = out.hierarchical_ranks_per_node;
  BOOK_CHECK(per_node == 0 || (per_node >= 1 && world_size % per_node == 0),
             "hierarchical gradient sync: nodes of "
                 << per_node << " ranks do not divide the world of " << world_size
                 << " ranks; give a divisor of " << world_size
                 << " (the ranks per node), or 0 for one flat all-reduce");
  BOOK_CHECK(!out.faults.skip_accumulation_mean || t.accumulation >= 2,
             "fault skip_accumulation_mean needs accumulation >= 2 (at 1 there is no mean to "
             "forget), got accumulation "
                 << t.accumulation);
  BOOK_CHECK(!out.faults.skip_last_bucket || overlaps_backward(out.rung),
             "fault skip_last_bucket needs an overlapped rung (buckets or no-sync), got rung "
                 << rung_name(out.rung));
  const train::AdditionTask task(t.digits);
  t.model.vocab_size = train::AdditionTask::vocab_size();
  t.model.context = task.model_context();
  t.model.validate();
  return out;
}

std::uint64_t fingerprint(const DdpOptions& options) {
  std::vector<std::uint8_t> bytes;
  auto put = [&](const auto& value) {
    const auto* p = reinterpret_cast<const std::uint8_t*>(&value);
    bytes.insert(bytes.end(), p, p + sizeof(value));
  };
  const train::TrainOptions& t = options.train;
  const train::Config& c = t.model;
  for (int field : {c.vocab_size, c.context, c.n_layer, c.n_head, c.d_model, t.digits,
                    t.micro_batch, t.accumulation, t.scaler.growth_interval})
    put(field);
  for (float field :
       {t.max_lr, t.min_lr, t.adamw.beta1, t.adamw.beta2, t.adamw.epsilon, t.adamw.weight_decay,
        t.clip_norm, t.scaler.initial_scale, t.scaler.growth_factor, t.scaler.backoff_factor,
        t.scaler.min_scale, t.scaler.max_scale})
    put(field);
  for (std::int64_t field : {t.total_steps, t.warmup_steps}) put(field);
  put(t.seed);
  put(static_cast<int>(t.precision));
  put(static_cast<int>(options.rung));
  put(static_cast<std::uint64_t>(options.bucket_bytes));
  put(static_cast<int>(options.algorithm));
  put(options.hierarchical_ranks_per_node);
  return train::fnv1a64(bytes);
}

}  // namespace book::ddp
