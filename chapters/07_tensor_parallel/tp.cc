// bazel run -c opt //chapters/07_tensor_parallel:tp [-- --tour] [-- --help]
//
// Tensor, sequence and expert parallelism on thread ranks. Per degree: the parameter and
// activation bytes each rank holds, the collectives and bytes of one layer and one step (counted,
// against their formulas), the step time and the loss's deviation from chapter 4's one-device
// run; the bandwidth model that keeps tensor parallelism inside an NVLink node; the MoE layer's
// all-to-all per expert-parallel degree, and its router's load balance. CSV and JSON under
// results/, the load chart as SVG where gnuplot is installed.
#include <cstdlib>
#include <fstream>
#include <iostream>

#include "chapters/01_gemm_cpu/sgemm.h"
#include "chapters/07_tensor_parallel/tp_stage.h"
#include "common/machine_load.h"
#include "common/main.h"

namespace {

using namespace book::tp;

void save(const book::Table& table, const std::string& name) {
  const std::string base = book::results_dir() + "/" + name;
  table.write_csv(base + ".csv");
  table.write_json(base + ".json");
}

// The busiest-expert chart: choices per expert before and after the router's training.
void plot_load(const std::vector<BalanceStep>& balance) {
  const std::string data = book::results_dir() + "/ch07_moe_load.dat";
  const std::string svg = book::results_dir() + "/ch07_moe_load.svg";
  std::ofstream out(data);
  out << "# expert, choices at initialisation, after training on the auxiliary loss\n";
  for (std::size_t e = 0; e < balance.front().load.size(); ++e)
    out << e << " " << balance.front().load[e] << " " << balance.back().load[e] << "\n";
  out.close();
  if (std::system("command -v gnuplot > /dev/null 2>&1") != 0) {
    std::cout << "plot: skipped (gnuplot not found; apt-get install gnuplot-nox); data in " << data
              << "\n";
    return;
  }
  const std::string command = "gnuplot -e \"in='" + data + "'; out='" + svg +
                              "'; steps=" + std::to_string(balance.back().step) +
                              "; capacity=" + std::to_string(balance.back().capacity) +
                              "\" chapters/07_tensor_parallel/moe_load.gp 2>/dev/null";
  std::cout << (std::system(command.c_str()) == 0 ? "plot: " + svg
                                                  : "plot: gnuplot failed; data in " + data)
            << "\n";
}

// What the tour ran, next to the chapter's default run (the README's tables).
void print_tour_config(const StageOptions& o) {
  const StageOptions chapter_default;
  std::cout << "tour-config: 07 | tp --tour: " << o.steps << " steps per degree, " << o.moe_tokens
            << " MoE tokens per rank, " << o.balance_steps
            << " router steps (the chapter's run, `tp` without --tour: " << chapter_default.steps
            << " steps, " << chapter_default.moe_tokens << " tokens, "
            << chapter_default.balance_steps << " router steps)\n";
}

int body(int argc, char** argv) {
  const StageOptions options = parse_stage_options(argc, argv);
  book::print_machine_load();
  if (options.tour) print_tour_config(options);
  // One thread per rank: the ranks are the parallelism here, not sgemm's threads.
  const book::gemm::SgemmThreads one_thread(1);
  const book::train::TrainOptions training = stage_training(options);
  std::cout << "# Tensor, sequence and expert parallelism (chapter 7)\n\n"
            << "Model: " << training.model.n_layer << " layers, d_model " << training.model.d_model
            << ", " << training.model.n_head << " heads, vocabulary " << training.model.vocab_size
            << "; micro-batch " << training.micro_batch << " x " << training.model.context
            << " tokens; " << options.steps << " FP32 steps per degree; ranks are threads.\n";
  std::cerr << "tp: chapter 4's one-device run ..." << std::endl;
  const OneDeviceRun one = run_one_device(training, options.steps);
  std::vector<TensorParallelRow> rows;
  for (int t : options.degrees)
    for (SequenceParallel sp : {SequenceParallel::kOff, SequenceParallel::kOn}) {
      if (t == 1 && sp == SequenceParallel::kOn) continue;  // nothing to split
      std::cerr << "tp: t = " << t << ", sequence parallelism " << sequence_parallel_name(sp)
                << " ..." << std::endl;
      rows.push_back(run_tensor_parallel(training, t, sp, options.steps, one));
    }
  const book::Table tp_table = tensor_parallel_table(rows, one);
  std::cout << "\n## Tensor and sequence parallelism (chapter 4's step: "
            << book::fixed(one.step_ms, 2) << " ms)\n\n"
            << tp_table.markdown();
  save(tp_table, "ch07_tensor_parallel");

  const Hardware hardware;
  const auto bandwidth = bandwidth_model(TransformerShape{}, hardware, {2, 4, 8, 16}, 8);
  const book::Table bw_table = bandwidth_table(bandwidth);
  std::cout << "\n## Why TP stays inside an NVLink node (a model, not a measurement)\n\n"
            << bw_table.markdown() << "\nFigures: " << hardware.nvlink.what << " "
            << hardware.nvlink.value / 1e9 << " GB/s (" << hardware.nvlink.source << "); "
            << hardware.network.what << " " << hardware.network.value / 1e9 << " GB/s ("
            << hardware.network.source << "); " << hardware.peak.what << " "
            << hardware.peak.value / 1e12 << " TFLOP/s (" << hardware.peak.source << ").\n";
  save(bw_table, "ch07_bandwidth_model");

  std::cerr << "tp: expert parallelism ..." << std::endl;
  const auto experts = run_expert_parallel(options);
  const book::Table ep_table = expert_parallel_table(experts);
  std::cout << "\n## Expert parallelism: " << options.experts
            << " experts, top-2, capacity factor 1.25\n\n"
            << ep_table.markdown();
  save(ep_table, "ch07_expert_parallel");
  std::cerr << "tp: load balance ..." << std::endl;
  const auto balance = run_load_balance(options);
  const book::Table balance_table = load_balance_table(balance);
  std::cout << "\n## The router on the load-balancing loss alone\n\n" << balance_table.markdown();
  save(balance_table, "ch07_load_balance");
  plot_load(balance);

  std::cout << "\n";
  for (const auto& line : tour_lines(rows, one, bandwidth, experts, balance))
    std::cout << line << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return book::run_main(argc, argv, body); }
