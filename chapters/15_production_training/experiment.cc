// The A/B experiment: arms, the comparability check, the promised rule, and one arm's run.
#include "chapters/15_production_training/experiment.h"

#include <algorithm>
#include <memory>
#include <sstream>

#include "chapters/03_collectives/threads.h"
#include "chapters/04_training_baseline/data.h"
#include "chapters/05_data_parallel/ddp_trainer.h"
#include "chapters/06_zero/zero_trainer.h"
#include "common/check.h"
#include "common/timer.h"

namespace book::prod {
namespace {

std::vector<std::string> split(std::string_view spec) {
  std::vector<std::string> parts;
  std::size_t begin = 0;
  for (std::size_t i = 0; i <= spec.size(); ++i)
    if (i == spec.size() || spec[i] == ':') {
      parts.emplace_back(spec.substr(begin, i - begin));
      begin = i + 1;
    }
  return parts;
}

constexpr const char* kArmForms =
    "write one:PREC, ddp:N:RUNG:PREC[:skip-accumulation-mean|:skip-last-bucket], zero1:N:PREC or "
    "zero2:N:PREC (PREC fp32, bf16 or fp16; RUNG per-tensor, flat, buckets or no-sync)";

DType parse_precision(const std::string& text, std::string_view spec) {
  if (text == "fp32") return DType::kF32;
  if (text == "bf16") return DType::kBF16;
  if (text == "fp16") return DType::kF16;
  BOOK_CHECK(false, "arm '" << spec << "': unknown precision '" << text << "': fp32, bf16 or fp16");
}

const char* precision_name(DType d) {
  return d == DType::kBF16 ? "bf16" : d == DType::kF16 ? "fp16" : "fp32";
}

int parse_ranks(const std::string& text, std::string_view spec) {
  int ranks = 0;
  std::istringstream in(text);
  BOOK_CHECK((in >> ranks) && in.eof() && ranks >= 1,
             "arm '" << spec << "': ranks '" << text << "' must be a whole number >= 1");
  return ranks;
}

}  // namespace

Arm parse_arm(std::string_view spec) {
  const std::vector<std::string> p = split(spec);
  Arm arm;
  if (p[0] == "one" && p.size() == 2) {
    arm.precision = parse_precision(p[1], spec);
  } else if (p[0] == "ddp" && (p.size() == 4 || p.size() == 5)) {
    arm.trainer = TrainerKind::kDdp;
    arm.ranks = parse_ranks(p[1], spec);
    arm.rung = ddp::parse_rung(p[2]);
    arm.precision = parse_precision(p[3], spec);
    if (p.size() == 5) {
      BOOK_CHECK(p[4] == "skip-accumulation-mean" || p[4] == "skip-last-bucket",
                 "arm '" << spec << "': unknown broken candidate '" << p[4]
                         << "': skip-accumulation-mean or skip-last-bucket");
      arm.broken = p[4] == "skip-last-bucket" ? BrokenCandidate::kSkipLastBucket
                                              : BrokenCandidate::kSkipAccumulationMean;
    }
  } else if ((p[0] == "zero1" || p[0] == "zero2") && p.size() == 3) {
    arm.trainer = p[0] == "zero1" ? TrainerKind::kZero1 : TrainerKind::kZero2;
    arm.ranks = parse_ranks(p[1], spec);
    arm.precision = parse_precision(p[2], spec);
  } else {
    BOOK_CHECK(false, "arm '" << spec << "' is not an arm: " << kArmForms);
  }
  return arm;
}

std::string arm_name(const Arm& arm) {
  const std::string n = std::to_string(arm.ranks), prec = precision_name(arm.precision);
  switch (arm.trainer) {
    case TrainerKind::kOneDevice:
      return "one:" + prec;
    case TrainerKind::kZero1:
      return "zero1:" + n + ":" + prec;
    case TrainerKind::kZero2:
      return "zero2:" + n + ":" + prec;
    case TrainerKind::kDdp:
      break;
  }
  std::string name = "ddp:" + n + ":" + ddp::rung_name(arm.rung) + ":" + prec;
  if (arm.broken == BrokenCandidate::kSkipAccumulationMean) name += ":skip-accumulation-mean";
  if (arm.broken == BrokenCandidate::kSkipLastBucket) name += ":skip-last-bucket";
  return name;
}

ArmSetup make_setup(const Arm& arm, const train::TrainOptions& shared, std::size_t bucket_bytes) {
  ArmSetup setup{arm, shared, bucket_bytes};
  setup.train.precision = arm.precision;
  return setup;
}

void check_comparable(const ArmSetup& baseline, const ArmSetup& candidate) {
  const train::TrainOptions &a = baseline.train, &b = candidate.train;
  auto same = [&](const char* field, auto x, auto y) {
    BOOK_CHECK(x == y, "the candidate's " << field << " is " << y << ", the baseline's " << x
                                          << ": an A/B experiment changes one thing, not the run "
                                             "it is measured on; give both arms the same "
                                          << field);
  };
  same("model.n_layer", a.model.n_layer, b.model.n_layer);
  same("model.n_head", a.model.n_head, b.model.n_head);
  same("model.d_model", a.model.d_model, b.model.d_model);
  same("seed", a.seed, b.seed);
  same("digits (the data)", a.digits, b.digits);
  same("micro_batch", a.micro_batch, b.micro_batch);
  same("accumulation", a.accumulation, b.accumulation);
  same("total_steps (the schedule)", a.total_steps, b.total_steps);
  same("warmup_steps", a.warmup_steps, b.warmup_steps);
  same("max_lr", a.max_lr, b.max_lr);
  same("min_lr", a.min_lr, b.min_lr);
  same("clip_norm", a.clip_norm, b.clip_norm);
  same("adamw.weight_decay", a.adamw.weight_decay, b.adamw.weight_decay);
  same("bucket_bytes", baseline.bucket_bytes, candidate.bucket_bytes);
}

EquivalenceRule promised_rule(const ArmSetup& baseline, const ArmSetup& candidate,
                              double tolerance) {
  const Arm &a = baseline.arm, &b = candidate.arm;
  auto ddp_at = [](const Arm& x, int n) {
    return x.trainer == TrainerKind::kOneDevice ? n == 1
                                                : x.trainer == TrainerKind::kDdp && x.ranks == n;
  };
  const bool every_micro_batch = baseline.train.accumulation == 1 ||
                                 (a.rung != ddp::Rung::kNoSync && b.rung != ddp::Rung::kNoSync);
  const bool one_vs_one_rank = ddp_at(a, 1) && ddp_at(b, 1);
  const bool rungs_at_two = a.trainer == TrainerKind::kDdp && b.trainer == TrainerKind::kDdp &&
                            a.ranks == b.ranks && a.ranks <= 2 && every_micro_batch;
  EquivalenceRule rule;
  rule.tolerance = tolerance;
  rule.bit_exact = a.precision == b.precision && (one_vs_one_rank || rungs_at_two);
  return rule;
}

void check_positive(std::int64_t value, const char* what) {
  BOOK_CHECK(value >= 1, "the experiment's " << what << " must be >= 1, got " << value);
}

namespace {

// What every trainer's loop shares: time the step, log it, evaluate every K steps (rank 0).
class Recorder {
 public:
  Recorder(const ArmSetup& setup, const RunPlan& plan, ArmRun& run)
      : plan_(plan), run_(run), evaluator_(setup.train) {
    const train::AdditionTask task(setup.train.digits);
    tokens_per_step_ =
        std::int64_t{setup.train.micro_batch} * setup.train.accumulation * task.model_context();
    run_.log.name = arm_name(setup.arm);
    run_.log.ranks = setup.arm.ranks;
    run_.log.model_flops_per_token =
        evaluator_.model().config().training_flops_per_token(task.model_context());
  }
  // One step: `step` runs it (on this rank; the others in lock step); `model` is what it trains.
  template <typename Step>
  void step(Step&& step, train::Model<float>& model) {
    const Timer timer;
    const train::StepResult r = step();
    const double seconds = timer.seconds();
    run_.log.steps.push_back({r.step, r.loss, seconds, tokens_per_step_, start_.seconds()});
    run_.losses.push_back(r.loss);
    if (plan_.eval_every > 0 && r.step % plan_.eval_every == 0) {
      std::copy(model.params().begin(), model.params().end(), evaluator_.model().params().begin());
      const float loss = evaluator_.validation_loss(plan_.eval_batches);
      run_.log.evals.push_back({r.step, start_.seconds(), loss});
    }
  }
  void finish() { run_.log.wall_seconds = start_.seconds(); }

 private:
  const Timer start_;
  const RunPlan& plan_;
  ArmRun& run_;
  train::Trainer evaluator_;  // chapter 4's validation loss, on a copy of the arm's weights
  std::int64_t tokens_per_step_ = 0;
};

ddp::DdpOptions ddp_options(const ArmSetup& setup) {
  ddp::DdpOptions o;
  o.train = setup.train;
  o.rung = setup.arm.rung;
  o.bucket_bytes = setup.bucket_bytes;
  o.faults.skip_accumulation_mean = setup.arm.broken == BrokenCandidate::kSkipAccumulationMean;
  o.faults.skip_last_bucket = setup.arm.broken == BrokenCandidate::kSkipLastBucket;
  return o;
}

zero::ZeroOptions zero_options(const ArmSetup& setup) {
  zero::ZeroOptions o;
  o.train = setup.train;
  o.stage = setup.arm.trainer == TrainerKind::kZero1 ? zero::Stage::kZero1 : zero::Stage::kZero2;
  o.bucket_bytes = setup.bucket_bytes;
  return o;
}

}  // namespace

void check_trainable(const ArmSetup& setup) {
  switch (setup.arm.trainer) {
    case TrainerKind::kOneDevice:
      train::check_trainable(setup.train, "one device");
      return;
    case TrainerKind::kDdp:
      ddp::resolve(ddp_options(setup), setup.arm.ranks);
      return;
    case TrainerKind::kZero1:
    case TrainerKind::kZero2:
      zero::resolve(zero_options(setup), setup.arm.ranks);
      return;
  }
}

ArmRun run_arm(const ArmSetup& setup, const RunPlan& plan) {
  check_positive(plan.steps, "steps");
  BOOK_CHECK(plan.eval_every >= 0,
             "the experiment's evaluation interval must be >= 1 step (0: "
             "no evaluation), got "
                 << plan.eval_every);
  check_positive(plan.eval_batches, "evaluation batches");
  ArmRun run;
  const Arm& arm = setup.arm;
  if (arm.trainer == TrainerKind::kOneDevice) {
    Recorder recorder(setup, plan, run);
    train::Trainer trainer(setup.train);
    for (std::int64_t s = 0; s < plan.steps; ++s)
      recorder.step([&] { return trainer.step(); }, trainer.model());
    recorder.finish();
    return run;
  }
  std::vector<ddp::RankSpans> spans(arm.ranks);
  coll::run_ranks(arm.ranks, [&](coll::Communicator& comm) {
    std::unique_ptr<Recorder> recorder;
    if (comm.rank() == 0) recorder = std::make_unique<Recorder>(setup, plan, run);
    if (arm.trainer == TrainerKind::kDdp) {
      ddp::DdpTrainer trainer(comm, ddp_options(setup));
      std::vector<ddp::StepTimes> times;
      for (std::int64_t s = 0; s < plan.steps; ++s) {
        if (recorder)
          recorder->step([&] { return trainer.step(); }, trainer.model());
        else
          trainer.step();
        times.push_back(trainer.last_times());
      }
      spans[comm.rank()] = ddp::average_spans(times);
    } else {
      zero::ZeroTrainer trainer(comm, zero_options(setup));
      for (std::int64_t s = 0; s < plan.steps; ++s) {
        if (recorder)
          recorder->step([&] { return trainer.step(); }, trainer.model());
        else
          trainer.step();
      }
    }
    if (recorder) recorder->finish();
  });
  if (arm.trainer == TrainerKind::kDdp) run.spans = spans;
  return run;
}

}  // namespace book::prod
