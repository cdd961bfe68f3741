// The ddp stage's command line and the run it trains.
#include <algorithm>

#include "chapters/05_data_parallel/stage.h"
#include "common/flags.h"

namespace book::ddp::stage {

StageOptions parse_stage_options(int argc, const char* const* argv) {
  StageOptions o;
  std::vector<std::string> rungs = {"per-tensor", "flat", "buckets", "no-sync"};
  Flags flags("ddp", "data parallelism: the DDP ladder on thread ranks or MPI processes");
  flags.add("tour", &o.tour, "the tour's short run (N = 1, 2; fewer steps; short analyses)");
  flags.add("backend", &o.backend, "threads: N thread ranks; mpi: the processes of mpirun")
      .choices({"threads", "mpi"});
  flags.add("ranks", &o.ranks, "thread ranks to run, e.g. 1,2,4 (threads backend)").range(1, 64);
  flags.add("rungs", &rungs, "rungs of the ladder to run")
      .choices({"per-tensor", "flat", "buckets", "no-sync", "1", "2", "3", "4"});
  flags.add("steps", &o.steps, "timed steps per rung and N").range(1, 100000);
  flags.add("warmup", &o.warmup, "untimed steps before them").range(0, 1000);
  flags.add("layers", &o.layers, "transformer blocks").range(1, 64);
  flags.add("d-model", &o.d_model, "model width (a multiple of --heads)").range(4, 4096);
  flags.add("heads", &o.heads, "attention heads").range(1, 64);
  flags.add("micro-batch", &o.micro_batch, "global micro-batch, sequences (every N must divide it)")
      .range(1, 1 << 16);
  flags.add("accumulation", &o.accumulation, "micro-batches per optimizer step").range(1, 1024);
  flags.add("digits", &o.digits, "digits per operand of the addition task").range(1, 6);
  flags.add("bucket-kib", &o.bucket_kib, "bucket cap in KiB (PyTorch: 25600)").range(1, 1 << 24);
  flags.add("analysis", &o.analysis,
            "after the ladder: trace, scaling model, bottlenecks, uneven work, stability");
  flags.add("trace", &o.trace_file, "the overlap trace's file (default: results/ch05_trace.json)");
  flags.add("cluster", &o.cluster,
            "under tools/cluster/cluster.sh (with --backend mpi): flat vs hierarchical all-reduce, "
            "the link's alpha-beta, DDP on 1 node vs all nodes, losses vs thread ranks");
  flags.parse(argc, argv);
  if (o.cluster && o.backend != "mpi")
    throw UsageError(
        "--cluster measures across the namespace cluster's MPI processes: add --backend mpi and "
        "run it as tools/cluster/cluster.sh run -- PROGRAM --backend mpi --cluster");
  if (o.cluster) {
    if (!flags.was_set("rungs")) rungs = {"flat", "no-sync"};
    if (!flags.was_set("steps")) o.steps = 6;
    if (!flags.was_set("warmup")) o.warmup = 1;
  }
  o.rungs.clear();
  for (const std::string& name : rungs) o.rungs.push_back(parse_rung(name));
  if (o.tour) {
    if (!flags.was_set("ranks")) o.ranks = {1, 2};
    if (!flags.was_set("steps")) o.steps = 4;
    if (!flags.was_set("warmup")) o.warmup = 1;
  }
  std::sort(o.ranks.begin(), o.ranks.end());
  o.ranks.erase(std::unique(o.ranks.begin(), o.ranks.end()), o.ranks.end());
  // Every run the threads stage will make, checked before the first one (issue 36: with
  // --ranks 1 --micro-batch 1 the whole ladder ran and wrote its table before the overlap trace
  // at N = 2 failed). Under MPI the world's size is known only inside mpirun: the ladder checks it.
  if (o.backend == "threads") {
    std::vector<int> worlds = o.ranks;
    if (o.analysis) worlds.push_back(2);  // the overlap trace's N
    for (int n : worlds)
      for (Rung rung : o.rungs) {
        try {
          resolve(run_options(o, rung), n);
        } catch (const Error& why) {
          throw UsageError(std::string(why.what()) + " (checked before the ladder runs" +
                           (n == 2 && o.analysis ? "; the overlap trace runs at N = 2, "
                                                   "--analysis=false skips it"
                                                 : "") +
                           ")");
        }
      }
  }
  return o;
}

DdpOptions run_options(const StageOptions& o, Rung rung) {
  DdpOptions d;
  d.train.model.n_layer = o.layers;
  d.train.model.d_model = o.d_model;
  d.train.model.n_head = o.heads;
  d.train.digits = o.digits;
  d.train.micro_batch = o.micro_batch;
  d.train.accumulation = o.accumulation;
  d.train.total_steps = std::max(10, o.warmup + o.steps);
  d.train.warmup_steps = 2;
  d.rung = rung;
  d.bucket_bytes = static_cast<std::size_t>(o.bucket_kib) * 1024;
  return d;
}

}  // namespace book::ddp::stage
