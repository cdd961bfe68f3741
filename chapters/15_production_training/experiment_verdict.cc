// The experiment's second and third checks (speed, profile) and its verdict line.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "chapters/15_production_training/experiment.h"
#include "common/check.h"
#include "common/table.h"
#include "common/timer.h"

namespace book::prod {

SpeedTrial time_arms(const ArmSetup& baseline, const ArmSetup& candidate, int repetitions,
                     std::int64_t steps, const std::function<double(int)>& peak_gflops) {
  check_positive(repetitions, "repetitions");
  check_positive(steps, "timed steps");
  const RunPlan plan{steps, 0, 1};
  auto tokens_per_s = [&](const ArmSetup& setup) {
    ReportOptions report;
    report.peak_gflops = peak_gflops ? peak_gflops(setup.arm.ranks) : 1.0;
    return summarize(run_arm(setup, plan).log, report).tokens_per_s;
  };
  SpeedTrial t;
  std::vector<double> ratios;
  for (int r = 0; r < repetitions; ++r) {  // interleaved: a machine that slows slows both
    t.baseline.push_back(tokens_per_s(baseline));
    t.candidate.push_back(tokens_per_s(candidate));
    ratios.push_back(t.candidate.back() / t.baseline.back());
  }
  t.baseline_median = median(t.baseline);
  t.candidate_median = median(t.candidate);
  t.ratio = t.candidate_median / t.baseline_median;
  t.ratio_low = *std::min_element(ratios.begin(), ratios.end());
  t.ratio_high = *std::max_element(ratios.begin(), ratios.end());
  return t;
}

namespace {

// The share of the step that a bottleneck of `kind` names (straggler: the slowest rank's work
// over the median rank's, as a share above parity).
double share_of(const ddp::Diagnosis& d, ddp::Bottleneck kind) {
  switch (kind) {
    case ddp::Bottleneck::kCompute:
      return d.compute_share;
    case ddp::Bottleneck::kCommunication:
      return d.comm_share;
    case ddp::Bottleneck::kData:
      return d.data_share;
    case ddp::Bottleneck::kStraggler:
      return d.slowest_over_median - 1;
  }
  return 0;
}

// A bottleneck's share must fall by this much (of the step) to count as moved: less is noise.
constexpr double kMovedShare = 0.05;

std::string percent(double share) { return fixed(100 * share, 0) + "%"; }

}  // namespace

ProfileCheck profile_arms(const ArmRun& baseline, const ArmRun& candidate) {
  ProfileCheck p;
  p.has_baseline = !baseline.spans.empty();
  p.has_candidate = !candidate.spans.empty();
  if (p.has_baseline) p.baseline = ddp::classify_bottleneck(baseline.spans);
  if (p.has_candidate) p.candidate = ddp::classify_bottleneck(candidate.spans);
  p.measured = p.has_baseline && p.has_candidate;
  if (p.measured)
    p.moved = p.baseline.kind == ddp::Bottleneck::kCompute || p.candidate.kind != p.baseline.kind ||
              share_of(p.candidate, p.baseline.kind) <=
                  share_of(p.baseline, p.baseline.kind) - kMovedShare;
  return p;
}

std::string Verdict::line() const {
  std::ostringstream out;
  char diff[32];
  std::snprintf(diff, sizeof diff, "%.3g", loss.largest_difference);
  const std::string how =
      rule.bit_exact ? std::string("bit for bit") : "within " + fixed(rule.tolerance, 4);
  if (!loss.equal) {
    out << "reject: loss differs from step " << loss.first_divergent_step << " (rule: " << how
        << "; largest |difference| " << diff << ")";
    return out.str();
  }
  const std::string speed_text = fixed(speed.ratio, 2) + "x (pairs " + fixed(speed.ratio_low, 2) +
                                 "-" + fixed(speed.ratio_high, 2) + ")";
  if (!speed.faster()) {
    out << "no faster: " << speed_text << "; loss equal " << how;
    return out.str();
  }
  const std::string kind = describe_profile(profile);
  if (!profile.moved) {
    out << "bottleneck unchanged: " << kind << "; loss equal " << how << ", " << speed_text;
    return out.str();
  }
  out << "proven: loss equal " << how << " over " << loss.steps_compared << " steps, " << speed_text
      << ", " << kind;
  return out.str();
}

std::string describe_profile(const ProfileCheck& p) {
  if (!p.measured) return "profile not measured (the classifier needs per-rank spans)";
  const ddp::Bottleneck k = p.baseline.kind;
  return std::string(ddp::bottleneck_name(k)) + " " + percent(share_of(p.baseline, k)) +
         " of the step -> " + ddp::bottleneck_name(p.candidate.kind) + " (" +
         ddp::bottleneck_name(k) + " " + percent(share_of(p.candidate, k)) + ")";
}

Experiment run_experiment(const ArmSetup& baseline, const ArmSetup& candidate,
                          const EquivalenceRule& rule, const RunPlan& plan, int repetitions,
                          std::int64_t timed_steps, const std::function<double(int)>& peak_gflops,
                          const ArmRun* baseline_run) {
  check_comparable(baseline, candidate);
  check_trainable(baseline);
  check_trainable(candidate);
  check_positive(plan.eval_every, "evaluation interval");  // time-to-converge needs evaluations
  check_positive(repetitions, "repetitions");
  check_positive(timed_steps, "timed steps");
  BOOK_CHECK(!baseline_run || static_cast<std::int64_t>(baseline_run->losses.size()) == plan.steps,
             "run_experiment: the baseline's run has " << baseline_run->losses.size()
                                                       << " steps, the plan " << plan.steps);
  Experiment e{baseline,
               candidate,
               baseline_run ? *baseline_run : run_arm(baseline, plan),
               run_arm(candidate, plan),
               {}};
  e.verdict.rule = rule;
  e.verdict.loss = compare_losses(e.baseline_run.losses, e.candidate_run.losses, rule);
  if (!e.verdict.loss.equal) return e;  // roll back: its speed does not matter
  e.verdict.speed = time_arms(baseline, candidate, repetitions, timed_steps, peak_gflops);
  e.verdict.profile = profile_arms(e.baseline_run, e.candidate_run);
  return e;
}

train::TrainOptions shared_run(const ExperimentOptions& o) {
  train::TrainOptions t;
  t.model.n_layer = o.layers;
  t.model.d_model = o.d_model;
  t.model.n_head = o.heads;
  t.digits = o.digits;
  t.micro_batch = o.micro_batch;
  t.accumulation = o.accumulation;
  t.total_steps = o.steps;
  t.warmup_steps = std::max<std::int64_t>(1, o.steps / 20);
  t.seed = static_cast<std::uint64_t>(o.seed);
  return t;
}

EquivalenceRule rule_for(const ExperimentOptions& options, const ArmSetup& baseline,
                         const ArmSetup& candidate) {
  EquivalenceRule rule = promised_rule(baseline, candidate, options.tolerance);
  if (options.rule == "bit")
    rule.bit_exact = true;
  else if (options.rule == "tolerance")
    rule.bit_exact = false;
  else
    BOOK_CHECK(options.rule == "auto",
               "unknown equivalence rule '" << options.rule << "': auto, bit or tolerance");
  return rule;
}

}  // namespace book::prod
