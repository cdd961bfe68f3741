// The production stage's command line.
#include <limits>

#include "chapters/15_production_training/stage.h"

namespace book::prod::stage {

StageOptions parse_stage_options(int argc, const char* const* argv) {
  StageOptions o;
  Flags flags("production",
              "training like production: the A/B experiment, surviving failures, the report");
  flags.add("tour", &o.tour, "the tour's short run (fewer steps and repetitions)");
  // --- Surviving failures (failures_options.h): flags --sup-* ---
  add_failures_flags(flags, &o.failures, "sup-");
  // --- end of Surviving failures ---
  // --- The experiment (experiment.h) ---
  ExperimentOptions& e = o.experiment;
  flags.add(
      "baseline", &e.baselines,
      "baseline arms, paired by position with --candidate: one:PREC, ddp:N:RUNG:PREC, "
      "zero1:N:PREC, zero2:N:PREC (PREC fp32|bf16|fp16; RUNG per-tensor|flat|buckets|no-sync)");
  flags.add("candidate", &e.candidates, "candidate arms, one per --baseline arm");
  flags.add("broken", &e.broken,
            "deliberately wrong candidates run against the first baseline: a DDP arm ending in "
            ":skip-accumulation-mean or :skip-last-bucket");
  flags.add("steps", &e.steps, "steps per arm for the loss comparison").range(1, 10000000);
  flags.add("repetitions", &e.repetitions, "interleaved timed repetitions per arm").range(1, 1000);
  flags.add("timed-steps", &e.timed_steps, "steps per timed repetition").range(1, 1000000);
  flags.add("eval-every", &e.eval_every, "validation loss every this many steps").range(1, 1000000);
  flags.add("target-loss", &e.target_loss, "time-to-converge: validation loss at or below this");
  flags.add("rule", &e.rule, "the loss rule: auto (what the change promises), bit, tolerance")
      .choices({"auto", "bit", "tolerance"});
  flags.add("tolerance", &e.tolerance, "the rule's absolute tolerance on the loss");
  flags.add("layers", &e.layers, "shared model: transformer blocks").range(1, 64);
  flags.add("d-model", &e.d_model, "shared model: width (a multiple of --heads)").range(4, 4096);
  flags.add("heads", &e.heads, "shared model: attention heads").range(1, 64);
  flags.add("digits", &e.digits, "digits per operand of the addition task").range(1, 6);
  flags.add("micro-batch", &e.micro_batch, "global micro-batch (every arm's N divides it)")
      .range(1, 1 << 16);
  flags.add("accumulation", &e.accumulation, "micro-batches per optimizer step").range(1, 1024);
  flags.add("seed", &e.seed, "initialisation and data order, both arms")
      .range(0, std::numeric_limits<std::int64_t>::max());
  flags.add("bucket-kib", &e.bucket_kib, "DDP/ZeRO bucket cap, KiB").range(1, 1 << 24);
  // --- end of the experiment's flags ---
  flags.parse(argc, argv);
  if (o.tour) {  // the experiment's tour: shorter runs, fewer repetitions
    if (!flags.was_set("steps")) e.steps = 200;
    if (!flags.was_set("repetitions")) e.repetitions = 3;
    if (!flags.was_set("timed-steps")) e.timed_steps = 40;
    if (!flags.was_set("eval-every")) e.eval_every = 25;
  }
  if (o.tour) shorten_for_tour(flags, &o.failures, "sup-");
  return o;
}

}  // namespace book::prod::stage
