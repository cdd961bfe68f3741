// The zero stage's command line and its measurements.
#include "chapters/06_zero/stage.h"

#include <algorithm>
#include <cmath>
#include <mutex>

#include "chapters/03_collectives/threads.h"
#include "chapters/05_data_parallel/ddp_trainer.h"
#include "chapters/06_zero/zero_trainer.h"
#include "common/check.h"
#include "common/flags.h"

namespace book::zero::stage {

StageOptions parse_stage_options(int argc, const char* const* argv) {
  StageOptions o;
  std::vector<std::string> stages = {"ddp", "zero1", "zero2"};
  std::string precision = "bf16";
  Flags flags("zero",
              "ZeRO stages 0-2: model-state bytes and traffic per rank, measured against "
              "the formulas");
  flags.add("tour", &o.tour, "the tour's short run (N = 2, 4; 2 steps)");
  flags.add("ranks", &o.ranks, "thread ranks to run, e.g. 1,2,4 (each must divide --micro-batch)")
      .range(1, 64);
  flags.add("stages", &stages, "stages to measure: 0/ddp, 1/zero1, 2/zero2 (3 is formulas only)");
  flags.add("precision", &precision, "training precision: bf16 or f16 (the paper's), or f32");
  flags.add("steps", &o.steps, "optimizer steps per stage and N").range(1, 100000);
  flags.add("layers", &o.layers, "transformer blocks").range(1, 64);
  flags.add("d-model", &o.d_model, "model width (a multiple of --heads)").range(4, 4096);
  flags.add("heads", &o.heads, "attention heads").range(1, 64);
  flags.add("micro-batch", &o.micro_batch, "global micro-batch, sequences (every N must divide it)")
      .range(1, 1 << 16);
  flags.add("bucket-kib", &o.bucket_kib, "bucket cap in KiB of FP32 gradient").range(1, 1 << 24);
  flags.add("psi", &o.psi, "parameters of the formula table (the paper: 7.5e9)").range(1, 1e15);
  flags.add("paper-ranks", &o.paper_ranks, "ranks of the formula table (the paper: 64)")
      .range(1, 1 << 20);
  flags.parse(argc, argv);
  if (o.tour) {
    if (!flags.was_set("ranks")) o.ranks = {2, 4};
    if (!flags.was_set("steps")) o.steps = 2;
  }
  o.precision = parse_dtype(precision);
  BOOK_CHECK(o.precision != DType::kF64,
             "--precision f64 is not a training precision; use bf16, f16 or f32");
  o.stages.clear();
  for (const std::string& name : stages) {
    const Stage s = parse_stage(name);
    BOOK_CHECK(s != Stage::kZero3, "--stages " << name
                                               << ": stage 3 (FSDP) is not built in this chapter; "
                                                  "its formula is printed in the formula table. "
                                                  "Measure 0, 1 or 2");
    o.stages.push_back(s);
  }
  std::sort(o.ranks.begin(), o.ranks.end());
  o.ranks.erase(std::unique(o.ranks.begin(), o.ranks.end()), o.ranks.end());
  for (int n : o.ranks) {
    BOOK_CHECK(o.micro_batch % n == 0,
               "--ranks " << n << " does not divide --micro-batch " << o.micro_batch
                          << ": every rank runs micro_batch / N sequences; pass a micro-batch "
                             "that every N divides (e.g. "
                          << o.micro_batch * n << ") or other ranks");
    resolve(run_options(o, Stage::kZero1), n);  // the trainer's own checks, before any run
  }
  return o;
}

ZeroOptions run_options(const StageOptions& o, Stage stage) {
  ZeroOptions z;
  z.train.model.n_layer = o.layers;
  z.train.model.d_model = o.d_model;
  z.train.model.n_head = o.heads;
  z.train.digits = 2;
  z.train.micro_batch = o.micro_batch;
  z.train.accumulation = 2;
  z.train.total_steps = std::max(10, o.steps);
  z.train.warmup_steps = 2;
  z.train.precision = o.precision;
  z.stage = stage;
  z.bucket_bytes = static_cast<std::size_t>(o.bucket_kib) * 1024;
  return z;
}

Row measure(const StageOptions& options, Stage stage, int n) {
  const ZeroOptions zero = run_options(options, stage);
  ddp::DdpOptions ddp;
  ddp.train = zero.train;
  ddp.rung = ddp::Rung::kNoSync;
  ddp.bucket_bytes = zero.bucket_bytes;
  std::vector<float> reference;
  coll::run_ranks(n, [&](coll::Communicator& comm) {
    ddp::DdpTrainer trainer(comm, ddp);
    for (int s = 0; s < options.steps; ++s) {
      const float loss = trainer.step().loss;
      if (comm.rank() == 0) reference.push_back(loss);
    }
  });
  Row row;
  row.stage = stage;
  row.ranks = n;
  std::mutex mutex;
  coll::run_ranks(n, [&](coll::Communicator& comm) {
    MemoryTracker tracker;
    ZeroTrainer trainer(comm, zero, &tracker);
    double deviation = 0;
    for (int s = 0; s < options.steps; ++s) {
      const float loss = trainer.step().loss;
      deviation =
          std::max(deviation, std::fabs(double(loss) - reference[s]) / std::fabs(reference[s]));
    }
    const ShardPlan& plan = trainer.plan();
    const std::uint64_t measured = trainer.measured_model_state().total();
    const std::lock_guard<std::mutex> lock(mutex);
    row.parameters = plan.total;
    row.loss_deviation = std::max(row.loss_deviation, deviation);
    if (measured >= row.measured) {
      row.measured = measured;
      row.owned = plan.owned;
      row.formula = model_state_bytes(stage, zero.train.precision, plan.total, plan.owned).total();
      row.gradient_peak = tracker.peak(MemoryCategory::kGradients);
    }
    if (comm.rank() == 0) {
      row.traffic = trainer.last_counts().bytes_sent;
      row.collectives = trainer.last_counts().collectives;
      row.traffic_formula = traffic_per_step(plan, stage, zero.train.precision).bytes_sent;
    }
  });
  const double k = zero.train.precision == DType::kF32 ? 8 : 12;
  row.paper = paper_bytes_per_rank(stage, static_cast<double>(row.parameters), n, k);
  if (zero.train.precision == DType::kF32)  // FP32: 4Ψ weights + 4Ψ gradients, K = 8 sharded
    row.paper = stage == Stage::kDdp ? 16.0 * row.parameters
                                     : 8.0 * row.parameters + 8.0 * row.parameters / n;
  return row;
}

}  // namespace book::zero::stage
