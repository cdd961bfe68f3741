// The pipeline stage's command line.
#include "chapters/08_pipeline_parallel/stage.h"

#include "common/check.h"
#include "common/flags.h"

namespace book::pp::stage {

StageOptions parse_stage_options(int argc, const char* const* argv) {
  StageOptions o;
  std::string schedule = "1f1b";
  Flags flags("pipeline",
              "pipeline schedules: bubble simulated vs formula, peak activations, a real step on "
              "thread ranks vs one device");
  flags.add("schedule", &schedule, "gpipe, 1f1b, interleaved, zb-h1 or all")
      .choices({"gpipe", "1f1b", "interleaved", "zb-h1", "all"});
  flags.add("stages", &o.stages, "p, pipeline ranks (threads)").range(1, 16);
  flags.add("micro-batches", &o.micro_batches, "m, micro-batches per step").range(1, 256);
  flags.add("chunks", &o.chunks, "v, chunks per rank of the interleaved schedule").range(1, 8);
  flags
      .add("layers", &o.layers,
           "transformer blocks (at least p, and a multiple of p·v for "
           "interleaved)")
      .range(1, 64);
  flags.add("d-model", &o.d_model, "model width (a multiple of --heads)").range(4, 1024);
  flags.add("heads", &o.heads, "attention heads").range(1, 64);
  flags.add("batch", &o.batch, "sequences per micro-batch").range(1, 64);
  flags
      .add("backend", &o.backend,
           "threads: p thread ranks in this process; mpi: one stage per process of mpirun "
           "(mpirun -np p; the real step only, no simulation or trace)")
      .choices({"threads", "mpi"});
  flags.add("cluster", &o.cluster,
            "with --backend mpi under tools/cluster/cluster.sh (2 nodes x 2 ranks): every "
            "placement of a 2 x 2 grid (which dimension crosses the link), measured");
  flags.add("repetitions", &o.repetitions, "--cluster: timed steps per placement").range(1, 100);
  flags.add("tour", &o.tour, "the tour's short run: every schedule at p = 4, m = 8, v = 2");
  flags.parse(argc, argv);
  BOOK_CHECK(!o.cluster || o.backend == "mpi",
             "--cluster measures MPI processes on the namespace cluster: pass --backend mpi and run "
             "it under tools/cluster/cluster.sh run --nodes 2 --ranks-per-node 2 -- PROGRAM");
  if (o.tour) {
    schedule = "all";
    o.stages = 4, o.micro_batches = 8, o.chunks = 2, o.layers = 8;
  }
  o.schedules = schedule == "all"
                    ? std::vector<std::string>{"gpipe", "1f1b", "interleaved", "zb-h1"}
                    : std::vector<std::string>{schedule};
  BOOK_CHECK(o.d_model % o.heads == 0,
             "--d-model " << o.d_model << " is not a multiple of --heads " << o.heads);
  for (const std::string& name : o.schedules) {
    const int parts = o.stages * (name == "interleaved" ? o.chunks : 1);
    BOOK_CHECK(o.layers >= parts, "fewer layers than stages: --layers "
                                      << o.layers << " cannot fill the " << parts
                                      << " (virtual) stages of " << name << "; pass --layers "
                                      << parts << " or more");
    if (name == "interleaved") {
      BOOK_CHECK(o.layers % parts == 0, "--layers "
                                            << o.layers << " does not split into p·v = " << parts
                                            << " equal chunks; use a multiple of " << parts);
      BOOK_CHECK(o.micro_batches % o.stages == 0,
                 "--micro-batches " << o.micro_batches << " is not a multiple of --stages "
                                    << o.stages << " (interleaving sends them in groups of p)");
    }
    BOOK_CHECK(name != "zb-h1" || o.micro_batches >= o.stages,
               "--micro-batches " << o.micro_batches << " is fewer than --stages " << o.stages
                                  << ": ZB-H1 needs m >= p");
  }
  return o;
}

}  // namespace book::pp::stage
