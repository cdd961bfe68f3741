// The zero stage's command line and its measurements.
#include "chapters/06_zero/stage.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <mutex>

#include "chapters/01_gemm_cpu/sgemm.h"
#include "chapters/03_collectives/threads.h"
#include "chapters/05_data_parallel/ddp_trainer.h"
#include "chapters/06_zero/zero3_trainer.h"
#include "chapters/06_zero/zero_trainer.h"
#include "common/check.h"
#include "common/flags.h"
#include "common/table.h"
#include "common/trace.h"

namespace book::zero::stage {

StageOptions parse_stage_options(int argc, const char* const* argv) {
  StageOptions o;
  std::vector<std::string> stages = {"ddp", "zero1", "zero2", "zero3"};
  std::string precision = "bf16";
  Flags flags("zero",
              "ZeRO stages 0-3: model-state bytes and traffic per rank, measured against "
              "the formulas");
  flags.add("tour", &o.tour, "the tour's short run (N = 2, 4; 2 steps)");
  flags.add("ranks", &o.ranks, "thread ranks to run, e.g. 1,2,4 (each must divide --micro-batch)")
      .range(1, 64);
  flags.add("stages", &stages, "stages to measure: 0/ddp, 1/zero1, 2/zero2, 3/zero3");
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
  flags.add("trace", &o.trace,
            "also trace 2 ZeRO-3 steps on 2 ranks, with and without prefetch (JSON, SVG)");
  flags.parse(argc, argv);
  if (o.tour) {
    if (!flags.was_set("ranks")) o.ranks = {2, 4};
    if (!flags.was_set("steps")) o.steps = 2;
  }
  o.precision = parse_dtype(precision);
  BOOK_CHECK(o.precision != DType::kF64,
             "--precision f64 is not a training precision; use bf16, f16 or f32");
  o.stages.clear();
  for (const std::string& name : stages) o.stages.push_back(parse_stage(name));
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
  auto measure_rank = [&](auto& trainer, const MemoryTracker& tracker, int rank) {
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
      row.buffers = tracker.peak(MemoryCategory::kCommunication);
    }
    if (rank == 0) {
      row.traffic = trainer.last_counts().bytes_sent;
      row.collectives = trainer.last_counts().collectives;
      row.traffic_formula =
          stage == Stage::kZero3
              ? zero3_traffic_per_step(plan, zero.train.precision, zero.train.accumulation)
                    .bytes_sent
              : traffic_per_step(plan, stage, zero.train.precision).bytes_sent;
    }
  };
  coll::run_ranks(n, [&](coll::Communicator& comm) {
    MemoryTracker tracker;
    if (stage == Stage::kZero3) {
      Zero3Trainer trainer(comm, zero, &tracker);
      measure_rank(trainer, tracker, comm.rank());
    } else {
      ZeroTrainer trainer(comm, zero, &tracker);
      measure_rank(trainer, tracker, comm.rank());
    }
  });
  const double k = zero.train.precision == DType::kF32 ? 8 : 12;
  row.paper = paper_bytes_per_rank(stage, static_cast<double>(row.parameters), n, k);
  if (zero.train.precision == DType::kF32)  // FP32: 4Ψ weights + 4Ψ gradients, K = 8 sharded
    row.paper = stage == Stage::kDdp     ? 16.0 * row.parameters
                : stage == Stage::kZero3 ? 16.0 * row.parameters / n
                                         : 8.0 * row.parameters + 8.0 * row.parameters / n;
  return row;
}

namespace {

// The picture's boxes: compute-lane categories, then the comm lane's two kinds of collective.
const std::vector<std::string> kBoxes = {"forward",   "backward",   "wait",
                                         "optimizer", "all_gather", "reduce_scatter"};

// The box index of an event (-1: not drawn) and its row: rank·2 (compute) or rank·2 + 1 (comm).
int box_of(const Trace::Event& e) {
  if (e.lane == "compute") {
    const auto at = std::find(kBoxes.begin(), kBoxes.begin() + 4, e.category);
    return at == kBoxes.begin() + 4 ? -1 : static_cast<int>(at - kBoxes.begin());
  }
  if (e.lane != "comm" || e.category != "collective") return -1;
  if (e.name.find("all_gather") != std::string::npos) return 4;
  if (e.name.find("reduce_scatter") != std::string::npos) return 5;
  return -1;
}

}  // namespace

void trace_zero3(const StageOptions& options, bool prefetch) {
  Trace trace;
  coll::ThreadsOptions threads;
  threads.trace = &trace;
  const gemm::SgemmThreads one_thread(1);
  const ZeroOptions zero = run_options(options, Stage::kZero3);
  double origin = 0;  // the drawing starts after a first, warm-up step (first touches of memory)
  coll::run_ranks(
      2,
      [&](coll::Communicator& comm) {
        Zero3Trainer trainer(comm, zero, nullptr, prefetch);
        trainer.step();
        comm.barrier();
        if (comm.rank() == 0) origin = trace.now_us();
        comm.barrier();
        trainer.step();
      },
      threads);
  const std::string name = prefetch ? "prefetch" : "no-prefetch";
  const std::string base = results_dir() + "/ch06_zero3_trace_" + name;
  trace.write_json(base + ".json");
  const auto events = trace.events();
  std::ofstream out(base + ".tsv");
  for (const auto& e : events) {
    const int box = box_of(e);
    if (box < 0 || e.start_us < origin) continue;
    out << 2 * e.rank + (e.lane == "comm" ? 1 : 0) << " " << (e.start_us - origin) / 1e3 << " "
        << (e.start_us + e.duration_us - origin) / 1e3 << " " << box << "\n";
  }
  out.close();
  std::cout << "trace:     " << base << ".json (ZeRO-3 " << name
            << ", N=2, 2 steps; open in https://ui.perfetto.dev)\n";
  const std::string script =
      "set terminal svg size 960,300 font 'sans,11' background rgb 'white'; set output '" + base +
      ".svg'; set title 'ZeRO-3, " + name + ", 2 thread ranks, " +
      dtype_name(zero.train.precision) + ", the second step (" +
      std::to_string(zero.train.accumulation) +
      " micro-batches)' noenhanced; set xlabel 'time (ms)'; set yrange [3.6:-0.6]; "
      "set ytics ('rank 0 compute' 0, 'rank 0 comm' 1, 'rank 1 compute' 2, 'rank 1 comm' 3); "
      "set key below horizontal noenhanced; set style fill solid 0.9 border rgb 'white'; "
      "set grid xtics; c(k)=word('#4878b0 #2f9e44 #d9480f #868e96 #7048e8 #f59f00', k+1); "
      "plot for [k=0:5] '" +
      base +
      ".tsv' using ((column(2)+column(3))/2):((column(4)==k)?column(1):1/0):"
      "((column(3)-column(2))/2):(0.38) with boxxyerror lc rgb c(k) "
      "title word('forward backward wait optimizer all-gather reduce-scatter', k+1)";
  const std::string command = "gnuplot -e \"" + script + "\" 2>/dev/null";
  if (std::system(command.c_str()) == 0)
    std::cout << "picture:   " << base << ".svg\n";
  else
    std::cout << "picture:   skipped (gnuplot not found; apt-get install gnuplot-nox)\n";
}

}  // namespace book::zero::stage
