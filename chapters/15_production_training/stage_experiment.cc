// "The experiment": each baseline/candidate pair judged in order (the loss, then the speed, then
// the profile), the broken candidates rejected, time-to-converge, the loss curves' picture.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>

#include "chapters/15_production_training/experiment.h"
#include "chapters/15_production_training/stage.h"
#include "common/table.h"

namespace book::prod::stage {
namespace {

std::string sci(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2g", value);
  return text;
}

std::string rule_name(const EquivalenceRule& rule) {
  return rule.bit_exact ? "bit for bit" : "within " + sci(rule.tolerance);
}

// The ranks' measured peak, once per rank count (chapter 1's FMA measurement takes a moment).
double peak_of(int ranks) {
  static std::map<int, double> peaks;
  auto [it, fresh] = peaks.try_emplace(ranks, 0.0);
  if (fresh) it->second = ranks_peak_gflops(ranks);
  return it->second;
}

std::vector<std::int64_t> fixed_steps(std::int64_t steps) {
  std::vector<std::int64_t> out;
  for (std::int64_t s : {std::int64_t{1}, std::int64_t{10}, std::int64_t{100}, steps})
    if (s <= steps && (out.empty() || out.back() < s)) out.push_back(s);
  return out;
}

RunReport report_of(const ArmRun& run, const ExperimentOptions& o) {
  ReportOptions r;
  r.target_loss = o.target_loss;
  r.loss_at = fixed_steps(static_cast<std::int64_t>(run.losses.size()));
  r.peak_gflops = peak_of(run.log.ranks);
  return summarize(run.log, r);
}

std::string converge_text(const RunReport& r, const ArmRun& run) {
  if (r.converge_steps < 0) {
    double best = run.log.evals.empty() ? 0 : run.log.evals.front().loss;
    for (const EvalRecord& e : run.log.evals) best = std::min(best, e.loss);
    return run.log.evals.empty() ? "not measured" : "not reached (best " + fixed(best, 3) + ")";
  }
  return std::to_string(r.converge_steps) + " steps, " + fixed(r.converge_seconds, 2) + " s";
}

// (a) the loss at fixed steps and the verdict of compare_losses; (b) speed; (c) profile; then
// time-to-converge and the verdict line.
void print_pair(const Experiment& e, const ExperimentOptions& o, Table& csv) {
  const Verdict& v = e.verdict;
  const std::string a = arm_name(e.baseline.arm), b = arm_name(e.candidate.arm);
  std::cout << "\n### " << a << " -> " << b << " (rule: " << rule_name(v.rule) << ")\n\n";
  Table loss({"step", "baseline loss", "candidate loss", "difference"});
  for (std::int64_t s : fixed_steps(static_cast<std::int64_t>(e.baseline_run.losses.size()))) {
    const double x = e.baseline_run.losses[s - 1], y = e.candidate_run.losses[s - 1];
    loss.add_row({std::to_string(s), fixed(x, 6), fixed(y, 6), sci(y - x)});
    csv.add_row({a, b, std::to_string(s), fixed(x, 6), fixed(y, 6), sci(y - x)});
  }
  std::cout << "(a) the loss\n\n"
            << loss.markdown() << "\ncompare_losses: "
            << (v.loss.equal ? "equal"
                             : "DIFFERS from step " + std::to_string(v.loss.first_divergent_step))
            << " (" << rule_name(v.rule) << ", " << v.loss.steps_compared
            << " steps, largest |difference| " << sci(v.loss.largest_difference) << ")\n";
  const std::vector<EvalRecord>&ea = e.baseline_run.log.evals, &eb = e.candidate_run.log.evals;
  if (!ea.empty() && ea.size() == eb.size())  // the same weights judged on held-out batches
    std::cout << "validation loss at step " << ea.back().step << ": baseline "
              << fixed(ea.back().loss, 4) << ", candidate " << fixed(eb.back().loss, 4)
              << " (difference " << sci(eb.back().loss - ea.back().loss) << ")\n";
  if (v.loss.equal) {
    const SpeedTrial& t = v.speed;
    auto range = [](const std::vector<double>& x) {
      return fixed(*std::min_element(x.begin(), x.end()), 0) + "-" +
             fixed(*std::max_element(x.begin(), x.end()), 0);
    };
    std::cout << "\n(b) the speed: tokens/s, median of " << t.baseline.size()
              << " interleaved repetitions of " << o.timed_steps << " steps (min-max)\n"
              << "    baseline " << fixed(t.baseline_median, 0) << " (" << range(t.baseline)
              << "), candidate " << fixed(t.candidate_median, 0) << " (" << range(t.candidate)
              << "): " << fixed(t.ratio, 2) << "x (pairs " << fixed(t.ratio_low, 2) << "-"
              << fixed(t.ratio_high, 2) << ")\n";
    const ProfileCheck& p = v.profile;
    std::cout << "\n(c) where the time went (chapter 5's classifier on per-rank spans)\n";
    for (auto [name, has, d] :
         {std::tuple{a, p.has_baseline, &p.baseline}, std::tuple{b, p.has_candidate, &p.candidate}})
      std::cout << "    " << name << ": "
                << (has ? std::string(ddp::bottleneck_name(d->kind)) + " (" + d->reason + ")"
                        : "not classified: the classifier needs each rank's data, compute and "
                          "exposed-communication time, which only chapter 5's DdpTrainer records")
                << "\n";
    std::cout << "    " << describe_profile(p) << "\n";
  }
  const RunReport ra = report_of(e.baseline_run, o), rb = report_of(e.candidate_run, o);
  std::cout << "\ntime-to-converge (validation loss <= " << o.target_loss << "): baseline "
            << converge_text(ra, e.baseline_run) << "; candidate "
            << converge_text(rb, e.candidate_run) << "\n"
            << "verdict: " << v.line() << "\n";
}

// Top: the loss curves; bottom: |candidate - baseline| per step on a log scale with the 1e-3
// line, where a bit-for-bit candidate draws nothing (its difference is 0 at every step).
void write_curves(const std::vector<const Experiment*>& runs, const std::string& title,
                  const std::string& results) {
  const std::string stem = results + "/ch15_loss_curves";
  const std::string data = stem + ".dat", script = stem + ".gp", png = stem + ".png";
  std::ofstream out(data);
  std::vector<std::string> names;
  for (const Experiment* e : runs) {
    const std::vector<float>&a = e->baseline_run.losses, &b = e->candidate_run.losses;
    out << "# " << e->candidate_run.log.name << " against " << e->baseline_run.log.name
        << ": step, baseline, candidate, |difference|\n";
    for (std::size_t i = 0; i < a.size(); ++i)
      out << i + 1 << " " << a[i] << " " << b[i] << " " << std::abs(double{b[i]} - a[i]) << "\n";
    out << "\n\n";
    names.push_back(e->candidate_run.log.name + " - " + e->baseline_run.log.name);
  }
  out.close();
  std::ofstream gp(script);
  gp << "set terminal pngcairo size 900,800 font ',10'\nset output '" << png << "'\n"
     << "set multiplot layout 2,1 title '" << title << "'\nset grid\nset xlabel 'step'\n"
     << "set ylabel 'training loss'\nset key top right\nplot '" << data
     << "' index 0 using 1:2 with lines lw 2 title '" << runs[0]->baseline_run.log.name << "'";
  for (std::size_t i = 0; i < runs.size(); ++i)
    gp << ", '' index " << i << " using 1:3 with lines lw 1 title '"
       << runs[i]->candidate_run.log.name << "'";
  gp << "\nset logscale y\nset ylabel '|candidate - baseline| (0 not drawn)'\n"
     << "set format y '%.0e'\nset key bottom right\nplot 1e-3 with lines dt 2 lc rgb 'black' title "
        "'1e-3'";
  for (std::size_t i = 0; i < runs.size(); ++i)
    gp << ", '" << data << "' index " << i << " using 1:($4 > 0 ? $4 : 1/0) with lines title '"
       << names[i] << "'";
  gp << "\nunset multiplot\n";
  gp.close();
  std::cout << run_gnuplot(script, png, data) << "\n";
}

}  // namespace

ExperimentSection run_experiment_section(const StageOptions& options) {
  const ExperimentOptions& o = options.experiment;
  const std::string results = results_dir();  // checked writable before anything trains
  BOOK_CHECK(o.baselines.size() == o.candidates.size() && !o.baselines.empty(),
             "--baseline and --candidate pair by position: give as many of each (got "
                 << o.baselines.size() << " and " << o.candidates.size() << ")");
  std::cout << "\n## The experiment\n\n"
            << "One change at a time, from the same seed: the loss first (rolled back if it "
               "differs), then tokens/s, then the profile.\n"
            << "shared run: " << o.layers << " layers, d_model " << o.d_model << ", " << o.heads
            << " heads, " << o.digits << "-digit addition, global micro-batch " << o.micro_batch
            << " x " << o.accumulation << " accumulated, seed " << o.seed << ", " << o.steps
            << " steps, buckets of " << o.bucket_kib << " KiB\n";
  if (options.tour)
    std::cout << "tour-config: 15 | experiment --tour: " << o.steps << " steps per arm, "
              << o.repetitions << " interleaved repetitions of " << o.timed_steps
              << " steps (the chapter's run: 1000 steps, 5 repetitions)\n";
  // Every arm parsed, and every pair checked, before anything trains: a typo in the last arm
  // must not cost the first pair's minutes.
  const train::TrainOptions shared = shared_run(o);
  const std::size_t bucket = static_cast<std::size_t>(o.bucket_kib) * 1024;
  auto setup = [&](const std::string& spec) { return make_setup(parse_arm(spec), shared, bucket); };
  std::vector<std::pair<ArmSetup, ArmSetup>> setups;
  for (std::size_t i = 0; i < o.baselines.size(); ++i)
    setups.emplace_back(setup(o.baselines[i]), setup(o.candidates[i]));
  for (const std::string& spec : o.broken) setups.emplace_back(setups.front().first, setup(spec));
  for (const auto& [a, b] : setups) {
    check_comparable(a, b);
    check_trainable(a);
    check_trainable(b);
    rule_for(o, a, b);
  }
  const RunPlan plan{o.steps, o.eval_every, 4};
  ExperimentSection section;
  Table csv({"baseline", "candidate", "step", "baseline loss", "candidate loss", "difference"});
  std::vector<Experiment> pairs;
  for (std::size_t i = 0; i < o.baselines.size(); ++i) {
    const auto& [a, b] = setups[i];
    pairs.push_back(
        run_experiment(a, b, rule_for(o, a, b), plan, o.repetitions, o.timed_steps, peak_of));
    print_pair(pairs.back(), o, csv);
    for (const ArmRun* r : {&pairs.back().baseline_run, &pairs.back().candidate_run}) {
      section.logs.push_back(r->log);
      section.reports.push_back(report_of(*r, o));
    }
  }
  if (!o.broken.empty())
    std::cout << "\n### Broken candidates against " << o.baselines.front() << "\n";
  std::vector<Experiment> broken;
  for (std::size_t i = o.baselines.size(); i < setups.size(); ++i) {
    const auto& [a, b] = setups[i];
    broken.push_back(run_experiment(a, b, rule_for(o, a, b), plan, o.repetitions, o.timed_steps,
                                    peak_of, &pairs.front().baseline_run));
    std::cout << arm_name(b.arm) << ": " << broken.back().verdict.line() << "\n";
  }
  csv.write_csv(results + "/ch15_experiment.csv");
  csv.write_json(results + "/ch15_experiment.json");
  std::vector<const Experiment*> curves;
  for (const Experiment& e : pairs) curves.push_back(&e);
  for (const Experiment& e : broken) curves.push_back(&e);
  write_curves(curves, "the same seed, one change at a time: candidates and broken candidates",
               results);
  if (options.tour) {
    for (const Experiment& e : pairs) {
      const std::int64_t s = static_cast<std::int64_t>(e.baseline_run.losses.size());
      std::cout << "tour: 15 | loss difference at step " << s << ", " << arm_name(e.baseline.arm)
                << " -> " << arm_name(e.candidate.arm) << " | "
                << sci(e.candidate_run.losses[s - 1] - e.baseline_run.losses[s - 1])
                << " (largest over " << s << " steps " << sci(e.verdict.loss.largest_difference)
                << ", " << rule_name(e.verdict.rule) << ": "
                << (e.verdict.loss.equal ? "pass" : "FAIL") << ") | an optimisation must leave "
                << "the loss equal (to 3 decimals at step 1000, or bit for bit where promised)\n";
      if (e.verdict.loss.equal)
        std::cout << "tour: 15 | speed, " << arm_name(e.candidate.arm) << " / "
                  << arm_name(e.baseline.arm) << " (median of " << o.repetitions
                  << " interleaved) | " << fixed(e.verdict.speed.ratio, 2) << "x (pairs "
                  << fixed(e.verdict.speed.ratio_low, 2) << "-"
                  << fixed(e.verdict.speed.ratio_high, 2) << ") | a speed-up is proven only "
                  << "after the loss, and only beyond the spread\n";
    }
    std::string caught;
    for (std::size_t i = 0; i < broken.size(); ++i)
      caught += (i ? ", " : "") + o.broken[i].substr(o.broken[i].rfind(':') + 1) +
                (broken[i].verdict.loss.equal
                     ? std::string(" NOT caught")
                     : " at step " + std::to_string(broken[i].verdict.loss.first_divergent_step));
    if (!broken.empty())
      std::cout << "tour: 15 | broken candidates rejected (first divergent step) | " << caught
                << " | the harness catches a wrong optimisation at the first step the loss "
                   "moves\n";
  }
  return section;
}

}  // namespace book::prod::stage
