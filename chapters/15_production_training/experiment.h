/// @file
/// The A/B experiment that proves an optimisation, as a practitioner runs it: a baseline and a
/// candidate that differ in ONE thing (the trainer, its gradient synchronisation, the precision),
/// trained from the same seed on the same data, judged in a fixed order:
/// 1. **the loss**: compare_losses (equivalence.h) on every step, bit for bit where the change
///    promises it, else within a tolerance; a candidate that changes the loss is rejected there,
///    whatever its speed;
/// 2. **the speed**: tokens/s of each arm as the median of interleaved repetitions (A, B, A, B…,
///    so a machine that slows down slows both), with their spread and the ratio;
/// 3. **the profile**: chapter 5's bottleneck classifier on both arms' per-rank spans: did the
///    change move the time it was meant to move?
///
/// An arm is written as a string: `one:fp32` (chapter 4's Trainer), `ddp:N:RUNG:PREC` (chapter
/// 5's DdpTrainer on N thread ranks; RUNG per-tensor, flat, buckets or no-sync), `zero1:N:PREC` and
/// `zero2:N:PREC` (chapter 6's ZeroTrainer); PREC fp32, bf16 or fp16 (mixed precision with FP32
/// master weights). A DDP arm may end in `:skip-accumulation-mean` or `:skip-last-bucket`, chapter
/// 5's two deliberately wrong optimisations (ddp_options.h's FaultInjection), for the harness to
/// catch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "chapters/04_training_baseline/trainer.h"
#include "chapters/05_data_parallel/bottleneck.h"
#include "chapters/05_data_parallel/gradient_sync.h"
#include "chapters/15_production_training/equivalence.h"
#include "chapters/15_production_training/report.h"
#include "common/dtype.h"

namespace book::prod {

/// Which of the book's trainers runs an arm.
enum class TrainerKind {
  kOneDevice,  ///< chapter 4's Trainer
  kDdp,        ///< chapter 5's DdpTrainer
  kZero1,      ///< chapter 6's ZeroTrainer, stage 1 (optimizer states sharded)
  kZero2,      ///< chapter 6's ZeroTrainer, stage 2 (and gradients)
};

/// A deliberately wrong optimisation (chapter 5's FaultInjection), for the harness to reject.
enum class BrokenCandidate {
  kNone,                  ///< a correct arm
  kSkipAccumulationMean,  ///< gradient accumulation that forgets to divide by the micro-batches
  kSkipLastBucket,        ///< an all-reduce that skips the last bucket
};

/// One side of the experiment: what differs between baseline and candidate.
struct Arm {
  TrainerKind trainer = TrainerKind::kOneDevice;    ///< which trainer
  int ranks = 1;                                    ///< thread ranks (1 for one device)
  ddp::Rung rung = ddp::Rung::kFlat;                ///< DDP only: gradient synchronisation
  DType precision = DType::kF32;                    ///< FP32, or BF16/FP16 mixed precision
  BrokenCandidate broken = BrokenCandidate::kNone;  ///< DDP only: an injected wrong change
};

/// Parses an arm written as above. Throws book::Error naming the part that is wrong and listing
/// what would do (an unknown trainer, rung, precision or fault; ranks < 1; a fault on a trainer
/// that has none).
Arm parse_arm(std::string_view spec);

/// The arm written back in parse_arm's form (e.g. "ddp:2:buckets:fp32"): its name in the tables.
std::string arm_name(const Arm& arm);

/// Everything one arm trains with: the arm, and the run it shares with the other arm.
struct ArmSetup {
  Arm arm;                               ///< what differs
  train::TrainOptions train;             ///< model, task, batch, schedule, seed (precision:
                                         ///< the arm's, set by make_setup)
  std::size_t bucket_bytes = 16 * 1024;  ///< DDP and ZeRO buckets (small: a tiny model)
};

/// `shared` with the arm's precision: one arm of an experiment.
ArmSetup make_setup(const Arm& arm, const train::TrainOptions& shared, std::size_t bucket_bytes);

/// Refuses, before anything trains, a pair whose comparison would mean nothing: a different
/// model shape, seed, task, batch, accumulation, schedule, optimizer or clipping, or a different
/// bucket size (the precision may differ: it can be the change under test). book::Error names
/// the first differing field and both values.
void check_comparable(const ArmSetup& baseline, const ArmSetup& candidate);

/// Refuses, before anything trains, an arm its trainer would refuse when built: chapter 4's
/// check_trainable, chapter 5's or 6's resolve at the arm's ranks (a micro-batch the ranks do not
/// divide, a broken candidate where it cannot act). The trainer's book::Error comes through.
void check_trainable(const ArmSetup& setup);

/// The rule the change promises: bit for bit when both arms add the same numbers in the same
/// order — one device against DDP at N = 1, or two DDP rungs at the same N ≤ 2 (a sum of two
/// numbers has one order) that both reduce every micro-batch (or accumulation 1), in the same
/// precision — else within `tolerance`. A broken candidate keeps the promise of the rung it
/// pretends to be.
EquivalenceRule promised_rule(const ArmSetup& baseline, const ArmSetup& candidate,
                              double tolerance);

/// How long to train an arm, and how often to evaluate it.
struct RunPlan {
  std::int64_t steps = 1000;     ///< optimizer steps
  std::int64_t eval_every = 50;  ///< validation loss every this many steps (0: never)
  int eval_batches = 4;          ///< validation micro-batches per evaluation
};

/// One arm's run: its log (report.h) and, where the trainer records them, its ranks' spans.
struct ArmRun {
  RunLog log;                         ///< per-step loss, seconds, tokens; evaluations
  std::vector<float> losses;          ///< the training loss of step 1, 2, … (compare_losses)
  std::vector<ddp::RankSpans> spans;  ///< per rank, averaged over the steps (DDP only; empty
                                      ///< for trainers that record no per-rank spans)
};

/// Trains one arm from scratch for plan.steps steps and records it. Refuses (book::Error) a plan
/// with steps < 1, a negative evaluation interval or eval_batches < 1, and whatever the trainer
/// refuses.
ArmRun run_arm(const ArmSetup& setup, const RunPlan& plan);

/// Throws book::Error naming `what` unless `value` ≥ 1: steps, repetitions, intervals.
void check_positive(std::int64_t value, const char* what);

/// The speed check: tokens/s of each arm over `repetitions` interleaved runs of `steps` steps.
struct SpeedTrial {
  std::vector<double> baseline;   ///< tokens/s of each repetition, in order
  std::vector<double> candidate;  ///< the same, run right after each baseline repetition
  double baseline_median = 0;     ///< median of baseline
  double candidate_median = 0;    ///< median of candidate
  double ratio = 0;               ///< candidate_median / baseline_median
  double ratio_low = 0;           ///< the smallest of the pairs' ratios (repetition by repetition)
  double ratio_high = 0;          ///< the largest
  /// Faster when every interleaved pair was: the slowest pair's ratio > 1.
  bool faster() const { return ratio_low > 1; }
};

/// Times the two arms A, B, A, B, … (`repetitions` each, `steps` steps each, no evaluation);
/// tokens/s is summarize()'s, with `peak_gflops(ranks)` as the MFU denominator. Refuses
/// repetitions or steps < 1.
SpeedTrial time_arms(const ArmSetup& baseline, const ArmSetup& candidate, int repetitions,
                     std::int64_t steps, const std::function<double(int)>& peak_gflops);

/// The profile check: each arm's bottleneck, where its trainer records per-rank spans.
struct ProfileCheck {
  bool measured = false;       ///< both arms have spans
  ddp::Diagnosis baseline;     ///< the baseline's (when it has spans)
  ddp::Diagnosis candidate;    ///< the candidate's (when it has spans)
  bool has_baseline = false;   ///< the baseline has spans
  bool has_candidate = false;  ///< the candidate has spans
  /// The profile agrees with the claim: the baseline was compute-bound (the step is the model's
  /// own work, nothing for a systems change to remove: the speed check judges it), or the
  /// baseline's bottleneck is gone (another kind) or takes at least 5 points less of the
  /// candidate's step. True when not measured (no evidence against).
  bool moved = true;
};

/// Classifies both runs' spans (chapter 5's classify_bottleneck).
ProfileCheck profile_arms(const ArmRun& baseline, const ArmRun& candidate);

/// "communication 41% of the step -> compute (communication 12%)", or why it was not measured.
std::string describe_profile(const ProfileCheck& profile);

/// The experiment's verdict, in the order it is judged.
struct Verdict {
  Equivalence loss;      ///< compare_losses on the whole runs
  EquivalenceRule rule;  ///< the rule it used
  SpeedTrial speed;      ///< the speed check
  ProfileCheck profile;  ///< the profile check
  /// One line: "reject: loss differs from step 37 (…)", "no faster: 0.98x (0.94–1.03)",
  /// "bottleneck unchanged: …", or "proven: …".
  std::string line() const;
  /// The candidate passed all three.
  bool proven() const { return loss.equal && speed.faster() && profile.moved; }
};

/// One pair, judged: both runs, and the verdict.
struct Experiment {
  ArmSetup baseline;     ///< the baseline's setup
  ArmSetup candidate;    ///< the candidate's
  ArmRun baseline_run;   ///< its run to plan.steps
  ArmRun candidate_run;  ///< the candidate's
  Verdict verdict;       ///< loss, then speed, then profile
};

/// The method, in order: check_comparable (refused before anything trains), both arms from the
/// same seed to plan.steps, compare_losses under `rule`; only a candidate with the same loss is
/// timed (time_arms: `repetitions` interleaved runs of `timed_steps`) and profiled (a candidate
/// that changes the loss is rolled back, its speed does not matter). Refuses an evaluation
/// interval, repetitions or timed_steps < 1 before training (time-to-converge needs evaluations).
/// `baseline_run`, when given, is the baseline's run to plan.steps already made (several candidates
/// against one baseline train it once).
Experiment run_experiment(const ArmSetup& baseline, const ArmSetup& candidate,
                          const EquivalenceRule& rule, const RunPlan& plan, int repetitions,
                          std::int64_t timed_steps, const std::function<double(int)>& peak_gflops,
                          const ArmRun* baseline_run = nullptr);

/// The stage's section "The experiment": its command line (stage_options.cc's block).
struct ExperimentOptions {
  /// Baseline arms, paired by position with `candidates`: a rung change with a bit-for-bit
  /// promise, and a trainer change with a tolerance promise.
  std::vector<std::string> baselines = {"ddp:2:flat:fp32", "one:fp32"};
  std::vector<std::string> candidates = {"ddp:2:buckets:fp32", "zero1:2:fp32"};  ///< see baselines
  /// Deliberately wrong candidates, each run against the first baseline.
  std::vector<std::string> broken = {"ddp:2:buckets:fp32:skip-accumulation-mean",
                                     "ddp:2:buckets:fp32:skip-last-bucket"};
  std::int64_t steps = 1000;       ///< steps per arm (the loss comparison)
  int repetitions = 5;             ///< interleaved timed repetitions per arm
  std::int64_t timed_steps = 100;  ///< steps per timed repetition
  std::int64_t eval_every = 50;    ///< validation loss every this many steps
  double target_loss = 1.7;        ///< time-to-converge: validation loss at or below this
  double tolerance = 1e-3;         ///< the rule's tolerance, where no bits are promised
  std::string rule = "auto";       ///< auto (promised_rule), bit, or tolerance
  int layers = 2;                  ///< the shared model: transformer blocks
  int d_model = 16;                ///< width
  int heads = 2;                   ///< attention heads
  int digits = 2;                  ///< digits per operand of the addition task
  int micro_batch = 8;             ///< global micro-batch (every arm's N divides it)
  int accumulation = 2;            ///< micro-batches per step
  std::int64_t seed = 1234;        ///< initialisation and data order, both arms
  int bucket_kib = 8;              ///< DDP/ZeRO bucket cap (small: several buckets in a tiny model)
};

/// The run both arms share, from the options (schedule: `steps` long, 5% warm-up).
train::TrainOptions shared_run(const ExperimentOptions& options);

/// The rule for a pair: options.rule "bit" or "tolerance", or "auto": promised_rule. Throws
/// book::Error for another value.
EquivalenceRule rule_for(const ExperimentOptions& options, const ArmSetup& baseline,
                         const ArmSetup& candidate);

}  // namespace book::prod
