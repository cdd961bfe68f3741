// The pipeline stage, its first section: each schedule's bubble simulated with unit costs against
// the formula, the activations each rank holds at its peak, the messages that cross the stage
// boundaries, and a real step on p thread ranks (chapter 4's model parts talking through chapter
// 3's Communicator) whose loss is compared with the one-device step.
#include <cmath>
#include <fstream>
#include <iostream>
#include <mutex>
#include <string>
#include <vector>

#include "chapters/03_collectives/threads.h"
#include "chapters/08_pipeline_parallel/executor.h"
#include "chapters/08_pipeline_parallel/partition.h"
#include "chapters/08_pipeline_parallel/registry.h"
#include "chapters/08_pipeline_parallel/simulator.h"
#include "chapters/08_pipeline_parallel/stage.h"
#include "common/check.h"
#include "common/table.h"
#include "common/trace.h"

namespace book::pp::stage {
namespace {

// The formula next to each schedule: (p−1)/(v·m+p−1), and for ZB-H1 with F = B = W its idle
// (p−1)(F+B−W) = (p−1) over the step's m(F+B+W) + (p−1).
double formula_for(const Schedule& s) {
  if (s.name == "zb-h1") {
    const double p = s.shape.stages, m = s.shape.micro_batches;
    return (p - 1) / (3 * m + p - 1);
  }
  return bubble_formula(s.shape);
}

void write_timeline(const Timeline& t, const std::string& path) {
  std::ofstream out(path);
  BOOK_CHECK(out, "cannot write " << path);
  out << "# rank start end op name\n";
  for (int r = 0; r < t.shape.stages; ++r)
    for (const TimedAction& a : t.ranks[r])
      out << r << " " << a.start << " " << a.end << " " << op_letter(a.action.op) << " "
          << action_name(a.action, t.shape.chunks > 1) << "\n";
}

ScheduleRow measure(const StageOptions& o, const std::string& name, Trace* trace) {
  Shape shape{o.stages, o.micro_batches, name == "interleaved" ? o.chunks : 1};
  const Schedule schedule = make_schedule(name, shape);
  ScheduleRow row;
  row.schedule = name;
  row.shape = shape;
  const Timeline t = simulate(schedule, Costs{1, 1, 1, 0});
  row.simulated = t.bubble_fraction();
  row.idle_rank0 = t.idle(0);
  row.formula = formula_for(schedule);
  row.peaks = peak_in_flight(schedule);
  row.messages = shape.stages > 1 ? boundary_messages(shape) : 0;
  write_timeline(t, results_dir() + "/ch08_timeline_" + name + ".tsv");

  const Workload work = make_workload(o);
  const train::Config& config = work.config;
  const std::vector<train::Batch>& micro = work.micro;
  row.single_loss = work.single_loss;
  const std::vector<int> cuts = even_boundaries(o.layers, shape.virtual_stages());
  ExecutionLog log;
  std::mutex mutex;
  row.executed_peaks.assign(shape.stages, 0);
  coll::ThreadsOptions threads;
  threads.trace = trace;
  coll::run_ranks(
      shape.stages,
      [&](coll::Communicator& comm) {
        comm.set_trace(trace, "comm");
        auto chunks = make_rank_models<float>(config, o.batch, shape, cuts, comm.rank(), 8);
        const RankResult r = execute<float>(comm, schedule, chunks, micro, {trace, &log});
        const std::lock_guard<std::mutex> lock(mutex);
        row.executed_peaks[comm.rank()] = r.peak_activations;
        if (comm.rank() == 0) {
          row.loss = r.loss;
          if (r.traffic.messages_sent > 0)
            row.boundary_bytes = r.traffic.bytes_sent / r.traffic.messages_sent;
        }
      },
      threads);
  const Timeline executed = log.timeline(shape);
  row.executed = executed.bubble_fraction();
  Timeline in_ms = executed;  // the real run's timeline, in milliseconds, for timeline.gp
  for (auto& rank : in_ms.ranks)
    for (auto& a : rank) a.start /= 1e3, a.end /= 1e3;
  write_timeline(in_ms, results_dir() + "/ch08_executed_" + name + ".tsv");
  return row;
}

}  // namespace

Workload make_workload(const StageOptions& o) {
  Workload work;
  work.config.n_layer = o.layers, work.config.d_model = o.d_model, work.config.n_head = o.heads;
  work.config.vocab_size = 12, work.config.context = 11;
  work.micro = random_micro_batches(work.config, o.micro_batches, o.batch, work.config.context, 8);
  train::Model<float> whole(work.config, o.batch);
  whole.init(8);
  work.single_loss = single_device_step(whole, work.micro);
  return work;
}

double ScheduleRow::deviation() const {
  return std::fabs(loss - single_loss) / std::fabs(single_loss);
}

std::string list(const std::vector<int>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? " " : "") + std::to_string(v[i]);
  return s;
}

std::vector<ScheduleRow> run_schedules(const StageOptions& o) {
  Table table({"schedule", "p", "m", "v", "bubble simulated", "formula", "bubble executed (wall)",
               "peak activations per rank (sim)", "peak (executed)", "messages",
               "bytes per message", "loss deviation"});
  std::vector<ScheduleRow> rows;
  for (const std::string& name : o.schedules) {
    std::cout << "running " << name << " on " << o.stages << " thread ranks ...\n";
    Trace trace;
    rows.push_back(measure(o, name, &trace));
    trace.write_json(results_dir() + "/ch08_pipeline_" + name + ".json");
    const ScheduleRow& r = rows.back();
    table.add_row({r.schedule, std::to_string(r.shape.stages),
                   std::to_string(r.shape.micro_batches), std::to_string(r.shape.chunks),
                   fixed(r.simulated, 3), fixed(r.formula, 3), fixed(r.executed, 3), list(r.peaks),
                   list(r.executed_peaks), std::to_string(r.messages),
                   std::to_string(r.boundary_bytes), fixed(r.deviation(), 6)});
  }
  std::cout << "\nSimulated with F = B = W = 1 (a B without split costs B + W = 2); the executed "
               "bubble is wall-clock idle on thread ranks sharing this machine's cores.\n\n"
            << table.markdown();
  const std::string base = results_dir() + "/ch08_pipeline";
  table.write_csv(base + ".csv");
  table.write_json(base + ".json");
  std::cout
      << "\nwrote " << base << ".csv, .json, ch08_pipeline_<schedule>.json (Chrome traces) "
      << "ch08_timeline_<schedule>.tsv (simulated) and ch08_executed_<schedule>.tsv (the real "
         "run, ms); draw one with\n  gnuplot -e \"in='"
      << results_dir() << "/ch08_timeline_1f1b.tsv'; out='timeline.svg'\" "
      << "chapters/08_pipeline_parallel/timeline.gp\n";
  return rows;
}

}  // namespace book::pp::stage
