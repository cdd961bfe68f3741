// The A/B harness on a tiny model and short runs: arms parsed and written back, the rule each
// change promises, a correct candidate passing bit for bit, the two broken candidates rejected at
// the first step their loss moves, what a run records, the speed and profile checks' shapes, and
// every refusal (a pair that cannot be compared, zero steps, repetitions or intervals).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "chapters/15_production_training/experiment.h"
#include "common/testing/expect_error.h"

namespace book::prod {
namespace {

using book::testing::expect_error;

// 2 layers, d_model 16, 2-digit addition, 4 sequences x 2 micro-batches: a step in milliseconds.
train::TrainOptions tiny() {
  train::TrainOptions t;
  t.model.n_layer = 2;
  t.model.d_model = 16;
  t.model.n_head = 2;
  t.digits = 2;
  t.micro_batch = 4;
  t.accumulation = 2;
  t.total_steps = 40;
  t.warmup_steps = 2;
  t.max_lr = 1e-2f;
  t.seed = 77;
  return t;
}

ArmSetup arm(const std::string& spec) { return make_setup(parse_arm(spec), tiny(), 1024); }

double unit_peak(int) { return 1.0; }

TEST(Experiment, ArmsAreWrittenBackAsParsed) {
  for (const char* spec : {"one:fp32", "one:bf16", "ddp:2:flat:fp32", "ddp:3:no-sync:fp16",
                           "zero1:2:fp32", "zero2:4:bf16", "ddp:2:buckets:fp32:skip-last-bucket",
                           "ddp:2:buckets:fp32:skip-accumulation-mean"})
    EXPECT_EQ(arm_name(parse_arm(spec)), spec);
  const Arm a = parse_arm("ddp:2:per-tensor:bf16");
  EXPECT_EQ(a.trainer, TrainerKind::kDdp);
  EXPECT_EQ(a.ranks, 2);
  EXPECT_EQ(a.rung, ddp::Rung::kPerTensor);
  EXPECT_EQ(a.precision, DType::kBF16);
  EXPECT_EQ(make_setup(a, tiny(), 1024).train.precision, DType::kBF16);
}

TEST(Experiment, ArmsThatAreNotArmsAreRefused) {
  expect_error([] { parse_arm("gpu:fp32"); }, {"'gpu:fp32' is not an arm", "ddp:N:RUNG:PREC"});
  expect_error([] { parse_arm("one:fp8"); }, {"unknown precision 'fp8'", "fp32, bf16 or fp16"});
  expect_error([] { parse_arm("ddp:0:flat:fp32"); }, "ranks '0' must be a whole number >= 1");
  expect_error([] { parse_arm("ddp:two:flat:fp32"); }, "ranks 'two'");
  expect_error([] { parse_arm("ddp:2:fast:fp32"); }, "unknown rung 'fast'");
  expect_error([] { parse_arm("ddp:2:flat:fp32:typo"); },
               {"unknown broken candidate 'typo'", "skip-last-bucket"});
  expect_error([] { parse_arm("zero1:2:fp32:skip-last-bucket"); }, "is not an arm");
}

TEST(Experiment, TheRulesChangesPromise) {
  EXPECT_TRUE(promised_rule(arm("ddp:2:flat:fp32"), arm("ddp:2:buckets:fp32"), 1e-3).bit_exact);
  EXPECT_TRUE(
      promised_rule(arm("ddp:2:per-tensor:fp32"), arm("ddp:2:buckets:fp32:skip-last-bucket"), 1e-3)
          .bit_exact)
      << "a broken candidate keeps the promise of the rung it pretends to be";
  EXPECT_TRUE(promised_rule(arm("one:fp32"), arm("ddp:1:no-sync:fp32"), 1e-3).bit_exact);
  EXPECT_FALSE(promised_rule(arm("ddp:2:flat:fp32"), arm("ddp:2:no-sync:fp32"), 1e-3).bit_exact)
      << "no-sync adds the micro-batches before the ranks: another order";
  EXPECT_FALSE(promised_rule(arm("ddp:3:flat:fp32"), arm("ddp:3:buckets:fp32"), 1e-3).bit_exact)
      << "three ranks' ring sums in an order that depends on the chunking";
  EXPECT_FALSE(promised_rule(arm("ddp:2:flat:fp32"), arm("ddp:2:flat:bf16"), 1e-3).bit_exact);
  const EquivalenceRule r = promised_rule(arm("one:fp32"), arm("zero1:2:fp32"), 2e-3);
  EXPECT_FALSE(r.bit_exact);
  EXPECT_EQ(r.tolerance, 2e-3);
  ExperimentOptions o;
  o.rule = "bit";
  EXPECT_TRUE(rule_for(o, arm("one:fp32"), arm("zero1:2:fp32")).bit_exact);
  o.rule = "sometimes";
  expect_error([&] { rule_for(o, arm("one:fp32"), arm("one:fp32")); },
               "unknown equivalence rule 'sometimes'");
}

TEST(Experiment, ARunRecordsEveryStepAndItsEvaluations) {
  const ArmRun run = run_arm(arm("ddp:2:buckets:fp32"), RunPlan{5, 2, 1});
  ASSERT_EQ(run.log.steps.size(), 5u);
  ASSERT_EQ(run.losses.size(), 5u);
  EXPECT_EQ(run.log.name, "ddp:2:buckets:fp32");
  EXPECT_EQ(run.log.ranks, 2);
  for (int s = 0; s < 5; ++s) {
    EXPECT_EQ(run.log.steps[s].step, s + 1);
    EXPECT_EQ(run.log.steps[s].tokens, 4 * 2 * 8) << "micro-batch x accumulation x context";
    EXPECT_EQ(run.log.steps[s].loss, static_cast<double>(run.losses[s]));
  }
  ASSERT_EQ(run.log.evals.size(), 2u) << "after steps 2 and 4";
  EXPECT_EQ(run.log.evals[1].step, 4);
  EXPECT_EQ(run.spans.size(), 2u) << "one entry per DDP rank";
  EXPECT_TRUE(run_arm(arm("zero1:2:fp32"), RunPlan{2, 0, 1}).spans.empty())
      << "ZeRO's trainer records no per-rank spans";
}

TEST(Experiment, ACorrectCandidatePassesBitForBit) {
  const ArmSetup base = arm("ddp:2:flat:fp32"), cand = arm("ddp:2:buckets:fp32");
  const Experiment e = run_experiment(base, cand, promised_rule(base, cand, 1e-3), RunPlan{8, 4, 1},
                                      1, 2, unit_peak);
  EXPECT_TRUE(e.verdict.loss.equal) << e.verdict.line();
  EXPECT_EQ(e.verdict.loss.largest_difference, 0.0);
  EXPECT_EQ(e.verdict.speed.baseline.size(), 1u) << "timed once the loss passed";
  EXPECT_TRUE(e.verdict.profile.measured);
  const std::string line = e.verdict.line();
  EXPECT_EQ(line.find("reject"), std::string::npos) << line;
}

TEST(Experiment, TheBrokenCandidatesAreRejectedWhereTheirLossMoves) {
  const ArmSetup base = arm("ddp:2:flat:fp32");
  const ArmRun base_run = run_arm(base, RunPlan{20, 5, 1});
  for (const char* spec :
       {"ddp:2:buckets:fp32:skip-last-bucket", "ddp:2:buckets:fp32:skip-accumulation-mean"}) {
    const ArmSetup cand = arm(spec);
    const Experiment e = run_experiment(base, cand, promised_rule(base, cand, 1e-3),
                                        RunPlan{20, 5, 1}, 1, 2, unit_peak, &base_run);
    const Equivalence& v = e.verdict.loss;
    ASSERT_FALSE(v.equal) << spec << " was not caught in 20 steps";
    EXPECT_GE(v.first_divergent_step, 2) << spec << ": step 1's loss comes before any update";
    const auto k = static_cast<std::size_t>(v.first_divergent_step);
    for (std::size_t s = 0; s + 1 < k; ++s)
      EXPECT_EQ(e.candidate_run.losses[s], base_run.losses[s]) << spec << " step " << s + 1;
    EXPECT_NE(e.candidate_run.losses[k - 1], base_run.losses[k - 1]) << spec;
    EXPECT_TRUE(e.verdict.speed.baseline.empty()) << spec << ": rolled back, not timed";
    EXPECT_NE(e.verdict.line().find("reject: loss differs from step " + std::to_string(k)),
              std::string::npos)
        << e.verdict.line();
  }
  // Dropping the embeddings' all-reduce shows at once: step 2 already differs.
  const ArmSetup skip = arm("ddp:2:buckets:fp32:skip-last-bucket");
  EXPECT_EQ(run_experiment(base, skip, promised_rule(base, skip, 1e-3), RunPlan{20, 5, 1}, 1, 2,
                           unit_peak, &base_run)
                .verdict.loss.first_divergent_step,
            2);
}

TEST(Experiment, TheSpeedAndProfileChecksHaveTheirShapes) {
  const SpeedTrial t = time_arms(arm("one:fp32"), arm("ddp:1:flat:fp32"), 3, 2, unit_peak);
  ASSERT_EQ(t.baseline.size(), 3u);
  ASSERT_EQ(t.candidate.size(), 3u);
  EXPECT_DOUBLE_EQ(t.ratio, t.candidate_median / t.baseline_median);
  EXPECT_LE(t.ratio_low, t.ratio_high);
  EXPECT_EQ(t.faster(), t.ratio_low > 1);
  const ArmRun one = run_arm(arm("one:fp32"), RunPlan{2, 0, 1});
  const ProfileCheck p = profile_arms(one, one);
  EXPECT_FALSE(p.measured);
  EXPECT_TRUE(p.moved) << "no spans: no evidence against";
  EXPECT_NE(describe_profile(p).find("needs per-rank spans"), std::string::npos);
}

// Hand-made spans: two ranks, each step 1 s, `comm` of it waiting on gradients.
ArmRun spans_run(double comm) {
  ArmRun run;
  for (int r = 0; r < 2; ++r) run.spans.push_back({0.0, 1.0 - comm, comm, 1.0});
  return run;
}

TEST(Experiment, TheProfileCheckAndTheVerdictLine) {
  const ProfileCheck stuck = profile_arms(spans_run(0.5), spans_run(0.48));
  ASSERT_TRUE(stuck.measured);
  EXPECT_EQ(stuck.baseline.kind, ddp::Bottleneck::kCommunication);
  EXPECT_FALSE(stuck.moved) << "50% -> 48% exposed communication is not the bottleneck removed";
  EXPECT_TRUE(profile_arms(spans_run(0.5), spans_run(0.4)).moved) << "10 points less";
  EXPECT_TRUE(profile_arms(spans_run(0.5), spans_run(0.05)).moved) << "now compute-bound";
  EXPECT_TRUE(profile_arms(spans_run(0.05), spans_run(0.05)).moved)
      << "compute-bound: nothing for a systems change to remove";

  Verdict v;
  v.rule.bit_exact = true;
  v.loss = {true, -1, 0.0, 100};
  v.speed.ratio = 1.2, v.speed.ratio_low = 1.1, v.speed.ratio_high = 1.3;
  v.profile = profile_arms(spans_run(0.5), spans_run(0.05));
  EXPECT_TRUE(v.proven());
  EXPECT_EQ(v.line().rfind("proven: loss equal bit for bit over 100 steps, 1.20x", 0), 0u)
      << v.line();
  v.profile = stuck;
  EXPECT_FALSE(v.proven());
  EXPECT_EQ(v.line().rfind("bottleneck unchanged: communication 50% of the step", 0), 0u)
      << v.line();
  v.speed.ratio = 0.98, v.speed.ratio_low = 0.94;
  EXPECT_EQ(v.line().rfind("no faster: 0.98x (pairs 0.94-1.30)", 0), 0u) << v.line();
  v.loss = {false, 37, 0.02, 100};
  EXPECT_EQ(v.line().rfind("reject: loss differs from step 37", 0), 0u) << v.line();
}

TEST(Experiment, APairThatCannotBeComparedIsRefusedBeforeTraining) {
  const ArmSetup base = arm("one:fp32");
  auto refused = [&](ArmSetup cand, const std::string& field) {
    expect_error(
        [&] {
          run_experiment(base, cand, EquivalenceRule{}, RunPlan{1, 1, 1}, 1, 1, unit_peak);
        },
        {"the candidate's " + field, "changes one thing"});
  };
  ArmSetup c = arm("ddp:2:flat:fp32");
  c.train.model.d_model = 32;
  refused(c, "model.d_model is 32, the baseline's 16");
  c = arm("ddp:2:flat:fp32");
  c.train.model.n_layer = 3;
  refused(c, "model.n_layer");
  c = arm("ddp:2:flat:fp32");
  c.train.seed = 78;
  refused(c, "seed is 78, the baseline's 77");
  c = arm("ddp:2:flat:fp32");
  c.train.digits = 3;
  refused(c, "digits (the data)");
  c = arm("ddp:2:flat:fp32");
  c.train.micro_batch = 8;
  refused(c, "micro_batch");
  c = arm("ddp:2:flat:fp32");
  c.bucket_bytes = 2048;
  refused(c, "bucket_bytes");
  // An arm its trainer would refuse, refused before the baseline trains.
  expect_error(
      [&] {
        run_experiment(base, arm("ddp:3:flat:fp32"), EquivalenceRule{}, RunPlan{1, 1, 1}, 1, 1,
                       unit_peak);
      },
      "not divisible by 3 ranks");
  expect_error([&] { check_trainable(arm("ddp:2:flat:fp32:skip-last-bucket")); },
               "skip_last_bucket needs an overlapped rung");
  expect_error([&] { check_trainable(arm("zero1:8:fp32")); }, "not divisible by 8 ranks");
  // The precision may differ: it can be the change under test.
  EXPECT_NO_THROW(check_comparable(base, arm("one:bf16")));
}

TEST(Experiment, ZeroOrNegativeCountsAreRefused) {
  const ArmSetup a = arm("one:fp32");
  expect_error([&] { run_arm(a, RunPlan{0, 0, 1}); }, "steps must be >= 1, got 0");
  expect_error([&] { run_arm(a, RunPlan{-3, 0, 1}); }, "steps must be >= 1, got -3");
  expect_error([&] { run_arm(a, RunPlan{2, -1, 1}); }, "evaluation interval must be >= 1");
  expect_error([&] { run_arm(a, RunPlan{2, 1, 0}); }, "evaluation batches must be >= 1");
  expect_error(
      [&] {
        run_experiment(a, a, EquivalenceRule{}, RunPlan{1, 0, 1}, 1, 1, unit_peak);
      },
      "evaluation interval must be >= 1, got 0");
  expect_error(
      [&] {
        run_experiment(a, a, EquivalenceRule{}, RunPlan{1, 1, 1}, 0, 1, unit_peak);
      },
      "repetitions must be >= 1, got 0");
  expect_error(
      [&] {
        run_experiment(a, a, EquivalenceRule{}, RunPlan{1, 1, 1}, 2, -5, unit_peak);
      },
      "timed steps must be >= 1, got -5");
  expect_error([&] { time_arms(a, a, -1, 1, unit_peak); }, "repetitions must be >= 1, got -1");
}

}  // namespace
}  // namespace book::prod
