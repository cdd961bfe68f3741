// bazel run //chapters/08_pipeline_parallel:pipeline [-- --schedule 1f1b --stages 4
//   --micro-batches 8] [--schedule all] [--tour]                       (--help lists the flags)
//
// Pipeline parallelism, measured: each schedule's bubble from the simulator with unit costs
// against the formula, the activations each rank holds at its peak, the messages and bytes that
// cross the stage boundaries, and a real step on p thread ranks (chapter 4's model parts talking
// through chapter 3's Communicator) whose loss is compared with the one-device step. Writes the
// table (CSV, JSON), each schedule's simulated timeline (.tsv for timeline.gp) and the real run's
// Chrome trace into the results folder.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <mutex>
#include <string>
#include <vector>

#include "chapters/03_collectives/mpi.h"
#include "chapters/03_collectives/threads.h"
#include "chapters/08_pipeline_parallel/executor.h"
#include "chapters/08_pipeline_parallel/partition.h"
#include "chapters/08_pipeline_parallel/pipeline_options.h"
#include "chapters/08_pipeline_parallel/registry.h"
#include "chapters/08_pipeline_parallel/three_d.h"
#include "common/check.h"
#include "common/machine_load.h"
#include "common/main.h"
#include "common/table.h"
#include "common/trace.h"

namespace {

using namespace book::pp;

struct Row {
  std::string schedule;
  Shape shape;
  double simulated = 0, formula = 0, executed = 0, idle_rank0 = 0;
  std::vector<int> peaks, executed_peaks;
  long long messages = 0;
  std::uint64_t boundary_bytes = 0;  // per message: one micro-batch across one boundary
  double loss = 0, single_loss = 0;
};

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

Row measure(const Options& o, const std::string& name, book::Trace* trace) {
  Shape shape{o.stages, o.micro_batches, name == "interleaved" ? o.chunks : 1};
  const Schedule schedule = make_schedule(name, shape);
  Row row;
  row.schedule = name;
  row.shape = shape;
  const Timeline t = simulate(schedule, Costs{1, 1, 1, 0});
  row.simulated = t.bubble_fraction();
  row.idle_rank0 = t.idle(0);
  row.formula = formula_for(schedule);
  row.peaks = peak_in_flight(schedule);
  row.messages = shape.stages > 1 ? boundary_messages(shape) : 0;
  write_timeline(t, book::results_dir() + "/08_timeline_" + name + ".tsv");

  book::train::Config config;
  config.n_layer = o.layers, config.d_model = o.d_model, config.n_head = o.heads;
  config.vocab_size = 12, config.context = 11;
  const auto micro = random_micro_batches(config, o.micro_batches, o.batch, config.context, 8);
  book::train::Model<float> whole(config, o.batch);
  whole.init(8);
  row.single_loss = single_device_step(whole, micro);
  const std::vector<int> cuts = even_boundaries(o.layers, shape.virtual_stages());
  ExecutionLog log;
  std::mutex mutex;
  row.executed_peaks.assign(shape.stages, 0);
  book::coll::ThreadsOptions threads;
  threads.trace = trace;
  book::coll::run_ranks(
      shape.stages,
      [&](book::coll::Communicator& comm) {
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
  write_timeline(in_ms, book::results_dir() + "/08_executed_" + name + ".tsv");
  return row;
}

std::string list(const std::vector<int>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? " " : "") + std::to_string(v[i]);
  return s;
}

// Stage balancing on a real shape: GPT-2 small (12 blocks, h = 768, V = 50257, s = 1024). Forward
// FLOPs per token: a block 24h² (its four weight matrices, 12h² parameters, 2 FLOPs each) + 4sh
// (scores and weighted sum); the LM head 2Vh (as much as 4.5 blocks); the embedding a lookup.
struct Balance {
  int stages = 0;
  std::vector<int> even, balanced;
  double even_largest = 0, balanced_largest = 0, ideal = 0;
};

std::vector<Balance> balance_gpt2_small(const std::vector<int>& stage_counts) {
  const double h = 768, V = 50257, s = 1024;
  const std::vector<double> blocks(12, (24 * h * h + 4 * s * h) / 1e6);  // MFLOP per token
  const double head = 2 * V * h / 1e6;
  std::vector<Balance> out;
  for (int p : stage_counts) {
    Balance b;
    b.stages = p;
    b.even = even_boundaries(12, p);
    const auto costs = stage_costs(blocks, b.even, 0, head);
    b.even_largest = *std::max_element(costs.begin(), costs.end());
    const Partition best = partition_layers(blocks, p, 0, head);
    b.balanced = best.boundaries;
    b.balanced_largest = best.largest;
    b.ideal = (12 * blocks[0] + head) / p;
    out.push_back(b);
  }
  return out;
}

// The 3D composition: DP × TP × PP = 2 × 2 × 2 on 8 thread ranks, 1F1B, in double precision,
// against one device running both replicas' micro-batches.
struct ThreeD {
  double loss = 0, single_loss = 0;
  int tp_all_reduces = 0;  // on world rank 0, over its tensor-parallel group
};

ThreeD run_three_d() {
  book::train::Config config;
  config.n_layer = 4, config.d_model = 32, config.n_head = 4, config.vocab_size = 12;
  config.context = 11;
  const book::coll::GridDegrees degrees{2, 2, 2, 1};
  const int m = 4, batch = 2;
  const auto all = random_micro_batches(config, degrees.dp * m, batch, config.context, 9);
  book::train::Model<double> whole(config, batch);
  whole.init(9);
  ThreeD out;
  out.single_loss = single_device_step(whole, all);
  const Schedule schedule = make_schedule("1f1b", {degrees.pp, m, 1});
  std::mutex mutex;
  book::coll::run_ranks(8, [&](book::coll::Communicator& world) {
    Rank3D<double> rank(world, degrees, config, batch, schedule.shape, 9);
    const int dp = rank.grid().coordinates().dp;
    const RankResult r = rank.step(schedule, std::span(all.data() + dp * m, m));
    const std::lock_guard<std::mutex> lock(mutex);
    if (world.rank() == 0)
      out.loss = r.loss, out.tp_all_reduces = rank.tensor_parallel().counts().all_reduces;
  });
  return out;
}

double deviation(const Row& r) {
  return std::fabs(r.loss - r.single_loss) / std::fabs(r.single_loss);
}

// --backend mpi: one stage per process of mpirun, over chapter 3's MPI backend. Each schedule's
// real step, its loss against the one-device step (every process runs that too) and the bytes
// per boundary message, printed by rank 0.
int run_mpi(const Options& o, int argc, char** argv) {
  book::coll::MpiSession session(&argc, &argv);
  book::coll::MpiCommunicator comm;
  BOOK_CHECK(comm.size() == o.stages, "--stages " << o.stages << " but mpirun started "
                                                  << comm.size() << " processes; pass --stages "
                                                  << comm.size() << " or mpirun -np " << o.stages);
  if (comm.rank() == 0) book::print_machine_load();
  book::train::Config config;
  config.n_layer = o.layers, config.d_model = o.d_model, config.n_head = o.heads;
  config.vocab_size = 12, config.context = 11;
  const auto micro = random_micro_batches(config, o.micro_batches, o.batch, config.context, 8);
  book::train::Model<float> whole(config, o.batch);
  whole.init(8);
  const double single = single_device_step(whole, micro);
  book::Table table({"schedule", "p (processes)", "m", "v", "loss", "one device", "loss deviation",
                     "bytes per message (rank 0)"});
  for (const std::string& name : o.schedules) {
    const Shape shape{o.stages, o.micro_batches, name == "interleaved" ? o.chunks : 1};
    const Schedule schedule = make_schedule(name, shape);
    auto chunks = make_rank_models<float>(
        config, o.batch, shape, even_boundaries(o.layers, shape.virtual_stages()), comm.rank(), 8);
    const RankResult r = execute<float>(comm, schedule, chunks, micro);
    const std::uint64_t per_message =
        r.traffic.messages_sent > 0 ? r.traffic.bytes_sent / r.traffic.messages_sent : 0;
    table.add_row({name, std::to_string(shape.stages), std::to_string(shape.micro_batches),
                   std::to_string(shape.chunks), book::fixed(r.loss, 6), book::fixed(single, 6),
                   book::fixed(std::fabs(r.loss - single) / std::fabs(single), 6),
                   std::to_string(per_message)});
  }
  if (comm.rank() == 0)
    std::cout << "\nThe real step as " << comm.size()
              << " MPI processes, one stage each (FP32):\n\n"
              << table.markdown();
  return 0;
}

int body(int argc, char** argv) {
  const Options o = parse_options(argc, argv);
  if (o.backend == "mpi") return run_mpi(o, argc, argv);
  book::print_machine_load();
  if (o.tour)
    std::cout << "tour-config: 08 | pipeline --tour: p = 4 thread ranks, m = 8 micro-batches, "
                 "v = 2 chunks (interleaved), 8 layers, d_model 32 (the chapter's run: "
                 "`pipeline --schedule all`, the same shape)\n";

  book::Table table({"schedule", "p", "m", "v", "bubble simulated", "formula",
                     "bubble executed (wall)", "peak activations per rank (sim)", "peak (executed)",
                     "messages", "bytes per message", "loss deviation"});
  std::vector<Row> rows;
  for (const std::string& name : o.schedules) {
    std::cout << "running " << name << " on " << o.stages << " thread ranks ...\n";
    book::Trace trace;
    rows.push_back(measure(o, name, &trace));
    const std::string json = book::results_dir() + "/08_pipeline_" + name + ".json";
    trace.write_json(json);
    const Row& r = rows.back();
    table.add_row({r.schedule, std::to_string(r.shape.stages),
                   std::to_string(r.shape.micro_batches), std::to_string(r.shape.chunks),
                   book::fixed(r.simulated, 3), book::fixed(r.formula, 3),
                   book::fixed(r.executed, 3), list(r.peaks), list(r.executed_peaks),
                   std::to_string(r.messages), std::to_string(r.boundary_bytes),
                   book::fixed(deviation(r), 6)});
  }
  std::cout << "\nSimulated with F = B = W = 1 (a B without split costs B + W = 2); the executed "
               "bubble is wall-clock idle on thread ranks sharing this machine's cores.\n\n"
            << table.markdown();
  const std::string base = book::results_dir() + "/08_pipeline";
  table.write_csv(base + ".csv");
  table.write_json(base + ".json");
  std::cout << "\nwrote " << base << ".csv, .json, 08_pipeline_<schedule>.json (Chrome traces) "
            << "08_timeline_<schedule>.tsv (simulated) and 08_executed_<schedule>.tsv (the real "
               "run, ms); draw one with\n  gnuplot -e \"in='"
            << book::results_dir() << "/08_timeline_1f1b.tsv'; out='timeline.svg'\" "
            << "chapters/08_pipeline_parallel/timeline.gp\n";

  book::Table balance({"stages", "even cuts", "largest stage (MFLOP/token)", "balanced cuts",
                       "largest stage", "pace gained", "perfect split"});
  const std::vector<Balance> balances = balance_gpt2_small({2, 4, 6});
  for (const Balance& b : balances)
    balance.add_row({std::to_string(b.stages), list(b.even), book::fixed(b.even_largest, 1),
                     list(b.balanced), book::fixed(b.balanced_largest, 1),
                     book::fixed(b.even_largest / b.balanced_largest, 2) + "x",
                     book::fixed(b.ideal, 1)});
  std::cout << "\nStage balancing (partition_layers), GPT-2 small: 12 blocks of "
            << book::fixed((24.0 * 768 * 768 + 4.0 * 1024 * 768) / 1e6, 1)
            << " MFLOP/token each, the LM head " << book::fixed(2.0 * 50257 * 768 / 1e6, 1)
            << " MFLOP/token on the last stage:\n\n"
            << balance.markdown();
  balance.write_csv(base + "_balance.csv");

  std::cout << "\nrunning DP x TP x PP = 2 x 2 x 2 on 8 thread ranks (1F1B, double) ...\n";
  const ThreeD three_d = run_three_d();
  const double three_d_deviation =
      std::fabs(three_d.loss - three_d.single_loss) / std::fabs(three_d.single_loss);
  std::cout << "3D: dp x tp x pp = 2 x 2 x 2, 8 thread ranks, 1F1B, m = 4 per replica: loss "
            << book::fixed(three_d.loss, 12) << ", one device over all 8 micro-batches "
            << book::fixed(three_d.single_loss, 12) << ", relative deviation " << three_d_deviation
            << "; rank 0's tensor-parallel all-reduces " << three_d.tp_all_reduces
            << " (2 blocks x 4 x 4 micro-batches)\n";

  if (o.tour) {
    std::cout << "tour: 08 | loss of DP x TP x PP = 2 x 2 x 2 on 8 thread ranks vs one device "
                 "(double) | relative deviation "
              << three_d_deviation
              << " | the three dimensions compose into the same step, grouped by one grid\n";
    auto find = [&](const std::string& n) -> const Row& {
      return *std::find_if(rows.begin(), rows.end(), [&](const Row& r) { return r.schedule == n; });
    };
    const Row &g = find("gpipe"), &f = find("1f1b"), &i = find("interleaved"), &z = find("zb-h1");
    std::cout << "tour: 08 | bubble, 1F1B p=4 m=8 (simulated, unit costs) | "
              << book::fixed(f.simulated, 3)
              << " (formula (p-1)/(m+p-1) = " << book::fixed(f.formula, 3)
              << ") | the bubble is (p-1) slots of m+p-1; more micro-batches shrink it\n";
    std::cout << "tour: 08 | bubble, interleaved v=2 vs 1F1B | " << book::fixed(i.simulated, 3)
              << " vs " << book::fixed(f.simulated, 3) << " (messages " << i.messages << " vs "
              << f.messages
              << ") | interleaving divides the bubble by about v, at v times the "
                 "messages\n";
    std::cout << "tour: 08 | idle per rank, ZB-H1 vs 1F1B (F = B = W = 1) | " << z.idle_rank0
              << " vs " << f.idle_rank0
              << " | splitting B from W and deferring W removes two "
                 "thirds of the bubble\n";
    std::cout << "tour: 08 | peak activations on rank 0, GPipe vs 1F1B (m=8, p=4) | "
              << g.executed_peaks[0] << " vs " << f.executed_peaks[0]
              << " | GPipe holds m micro-batches, 1F1B at most p\n";
    const Balance& b4 = balances[1];
    std::cout
        << "tour: 08 | slowest of 4 stages, GPT-2 small, layers counted vs partition_layers | "
        << book::fixed(b4.even_largest, 1) << " vs " << book::fixed(b4.balanced_largest, 1)
        << " MFLOP/token (" << book::fixed(b4.even_largest / b4.balanced_largest, 2)
        << "x) | weigh the LM head, not the layer count, when cutting stages\n";
    double worst = 0;
    for (const Row& r : rows) worst = std::max(worst, deviation(r));
    std::cout << "tour: 08 | loss of a real step on 4 thread ranks vs one device, every schedule | "
              << "relative deviation " << worst
              << " | the pipeline computes the same step, not an approximation\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return book::run_main(argc, argv, body); }
