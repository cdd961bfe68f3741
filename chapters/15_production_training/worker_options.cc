// The worker's command line, both sides of it (worker_options.h).
#include "chapters/15_production_training/worker_options.h"

#include <algorithm>
#include <filesystem>

namespace book::prod {

void add_worker_flags(Flags& flags, WorkerOptions* o) {
  flags.add("steps", &o->steps, "train until this many steps are done").range(1, 1 << 30);
  flags.add("every", &o->every, "a checkpoint after every this many steps").range(1, 1 << 30);
  flags.add("keep", &o->keep, "checkpoints kept").range(1, 100);
  flags.add("dir", &o->dir, "checkpoints, heartbeats, the step log, the final weights");
  flags.add("resume-from", &o->resume_from, "the checkpoint's step to load (0: none)")
      .range(0, 1 << 30);
  flags.add("attempt", &o->attempt, "which launch this is").range(0, 1 << 20);
  flags.add("layers", &o->layers, "transformer blocks").range(1, 64);
  flags.add("d-model", &o->d_model, "model width").range(4, 4096);
  flags.add("heads", &o->heads, "attention heads").range(1, 64);
  flags.add("micro-batch", &o->micro_batch, "global micro-batch").range(1, 1 << 16);
  flags.add("seed", &o->seed, "initialisation and data order");
  flags.add("fault", &o->fault, "a fault to inject")
      .choices({"none", "kill", "hang", "corrupt", "disk-full"});
  flags.add("fault-step", &o->fault_step, "the step it strikes at").range(0, 1 << 30);
  flags.add("fault-rank", &o->fault_rank, "the rank it strikes").range(0, 1 << 20);
  flags.add("timeout-ms", &o->timeout_ms, "the collectives' timeout, ms").range(1, 1 << 30);
}

std::vector<std::string> worker_args(const WorkerOptions& o) {
  return {"--steps=" + std::to_string(o.steps),
          "--every=" + std::to_string(o.every),
          "--keep=" + std::to_string(o.keep),
          "--dir=" + o.dir,
          "--resume-from=" + std::to_string(o.resume_from),
          "--attempt=" + std::to_string(o.attempt),
          "--layers=" + std::to_string(o.layers),
          "--d-model=" + std::to_string(o.d_model),
          "--heads=" + std::to_string(o.heads),
          "--micro-batch=" + std::to_string(o.micro_batch),
          "--seed=" + std::to_string(o.seed),
          "--fault=" + o.fault,
          "--fault-step=" + std::to_string(o.fault_step),
          "--fault-rank=" + std::to_string(o.fault_rank),
          "--timeout-ms=" + std::to_string(o.timeout_ms)};
}

ddp::DdpOptions supervised_run(int layers, int d_model, int heads, int micro_batch,
                               std::int64_t steps, std::int64_t seed) {
  ddp::DdpOptions d;
  d.train.model.n_layer = layers;
  d.train.model.d_model = d_model;
  d.train.model.n_head = heads;
  d.train.digits = 2;
  d.train.micro_batch = micro_batch;
  d.train.total_steps = std::max<std::int64_t>(steps, 10);
  d.train.warmup_steps = 2;
  d.train.seed = static_cast<std::uint64_t>(seed);
  d.rung = ddp::Rung::kNoSync;
  return d;
}

std::string heartbeat_file(const std::string& dir, int rank) {
  return (std::filesystem::path(dir) / ("heartbeat-" + std::to_string(rank))).string();
}

std::string step_log_file(const std::string& dir) {
  return (std::filesystem::path(dir) / "steps.log").string();
}

std::string final_weights_file(const std::string& dir) {
  return (std::filesystem::path(dir) / "final.weights").string();
}

}  // namespace book::prod
