// bazel run //chapters/06_zero:zero [-- --tour] [--ranks 1,2,3,4] [--stages ddp,zero1,zero2,zero3]
//   [--precision bf16] [--psi 7.5e9 --paper-ranks 64]      (--help lists the flags)
//
// ZeRO, measured: at every stage and N, the model-state bytes of the largest rank (by the memory
// tracker) against the exact formula and the paper's, the gradient peak, the communication
// buffers (ZeRO-3's gather buffers), the bytes rank 0 sent per step (by the counters) against the
// ring's formula, and the losses against chapter 5's DDP. Then
// the formulas for the model the reader names (the ZeRO paper's 7.5B on 64 GPUs by default).
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "chapters/06_zero/sharding.h"
#include "chapters/06_zero/stage.h"
#include "common/machine_load.h"
#include "common/main.h"
#include "common/table.h"

namespace {

using namespace book::zero;
using namespace book::zero::stage;

std::string scientific(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1e", value);
  return text;
}

std::string per_parameter(std::uint64_t bytes, std::uint64_t psi) {
  return book::fixed(static_cast<double>(bytes) / static_cast<double>(psi), 3);
}

book::Table measured_table(const std::vector<Row>& rows) {
  book::Table t({"stage", "N", "Ψ", "S_r", "bytes measured", "exact formula", "paper formula",
                 "bytes/Ψ", "gradient peak", "comm buffers", "sent/step measured",
                 "sent/step formula",
                 "collectives", "loss vs DDP"});
  for (const Row& r : rows)
    t.add_row({stage_name(r.stage), std::to_string(r.ranks), std::to_string(r.parameters),
               std::to_string(r.owned), std::to_string(r.measured), std::to_string(r.formula),
               book::fixed(r.paper, 1), per_parameter(r.measured, r.parameters),
               std::to_string(r.gradient_peak), std::to_string(r.buffers),
               std::to_string(r.traffic),
               std::to_string(r.traffic_formula), std::to_string(r.collectives),
               scientific(r.loss_deviation)});
  return t;
}

book::Table formula_table(const StageOptions& o) {
  book::Table t({"stage", "Ψ", "N", "formula", "GB per rank"});
  const char* formulas[] = {"(2+2+K)Ψ", "2Ψ+2Ψ+KΨ/N", "2Ψ+(2+K)Ψ/N", "(2+2+K)Ψ/N"};
  for (Stage s : {Stage::kDdp, Stage::kZero1, Stage::kZero2, Stage::kZero3})
    t.add_row({stage_name(s), scientific(o.psi), std::to_string(o.paper_ranks),
               formulas[static_cast<int>(s)],
               book::fixed(paper_bytes_per_rank(s, o.psi, o.paper_ranks) / 1e9, 1)});
  return t;
}

void print_tour(const StageOptions& o, const std::vector<Row>& rows, const book::Table& paper) {
  const int n = o.ranks.back();
  std::string bytes, per_psi, names, exact = "yes";
  std::uint64_t ddp_traffic = 0, zero_traffic_max = 0, zero3_traffic = 0, zero3_buffers = 0;
  double deviation = 0;
  for (const Row& r : rows) {
    if (r.ranks != n) continue;
    bytes += (bytes.empty() ? "" : " / ") + std::to_string(r.measured);
    per_psi += (per_psi.empty() ? "" : " / ") + per_parameter(r.measured, r.parameters);
    names += std::string(names.empty() ? "" : " / ") + stage_name(r.stage);
    if (r.measured != r.formula || r.traffic != r.traffic_formula) exact = "NO";
    if (r.stage == Stage::kDdp)
      ddp_traffic = r.traffic;
    else if (r.stage == Stage::kZero3)
      zero3_traffic = r.traffic, zero3_buffers = r.buffers;
    else
      zero_traffic_max = std::max(zero_traffic_max, r.traffic);
    deviation = std::max(deviation, r.loss_deviation);
  }
  std::cout << "tour: 06 | model-state bytes per rank, " << book::dtype_name(o.precision)
            << ", N=" << n << ", " << names << " | " << bytes << " B = " << per_psi
            << " B per parameter (formula exact: " << exact
            << ") | 16Ψ, 4Ψ+12Ψ/N, 2Ψ+14Ψ/N, 16Ψ/N: sharding optimizer state, gradients, "
               "then weights\n";
  std::cout << "tour: 06 | bytes sent per rank per step, ZeRO-1/2 vs DDP (N=" << n << ") | "
            << zero_traffic_max << " vs " << ddp_traffic
            << " B | reduce-scatter + all-gather = all-reduce: ZeRO-1/2 cost no extra traffic\n";
  if (zero3_traffic > 0 && ddp_traffic > 0) {
    const int micro = run_options(o, Stage::kZero3).train.accumulation;
    std::cout << "tour: 06 | bytes sent per rank per micro-batch, ZeRO-3 vs DDP's per step (N="
              << n << ") | " << zero3_traffic / micro << " vs " << ddp_traffic << " B = "
              << book::fixed(static_cast<double>(zero3_traffic) / micro / ddp_traffic, 3)
              << "x, plus " << zero3_buffers
              << " B of gather buffers | weights gathered in forward and again in backward, "
                 "gradients reduce-scattered: 3Ψ(N-1)/N vs 2Ψ(N-1)/N\n";
  }
  std::cout << "tour: 06 | loss vs chapter 5's DDP, every stage up to N=" << n << " ("
            << book::dtype_name(o.precision) << ") | largest relative deviation "
            << scientific(deviation) << " | sharding changes where numbers live, not the numbers\n";
  std::string gb;
  for (const auto& row : paper.rows()) gb += (gb.empty() ? "" : " / ") + row.back();
  std::cout << "tour: 06 | the ZeRO paper's example, Ψ=" << scientific(o.psi)
            << ", N=" << o.paper_ranks << ", K=12 | " << gb
            << " GB per rank | DDP / ZeRO-1 / -2 / -3 (Rajbhandari et al. 2020, Fig. 1)\n";
}

// What the tour ran, next to the chapter's default run (the README's tables).
void print_tour_config(const StageOptions& o) {
  const StageOptions chapter_default;
  const auto list = [](const std::vector<int>& ranks) {
    std::string out;
    for (int n : ranks) out += (out.empty() ? "" : ", ") + std::to_string(n);
    return out;
  };
  std::cout << "tour-config: 06 | zero --tour: N = " << list(o.ranks) << " thread ranks, "
            << o.steps << " steps per stage (the chapter's run, `zero` without --tour: N = "
            << list(chapter_default.ranks) << ", " << chapter_default.steps << " steps)\n";
}

int body(int argc, char** argv) {
  const StageOptions o = parse_stage_options(argc, argv);
  book::print_machine_load();
  if (o.tour) print_tour_config(o);
  const ZeroOptions shape = resolve(run_options(o, Stage::kZero1), 1);
  const auto& c = shape.train.model;
  std::cout << "# Chapter 6: ZeRO\n\n"
            << "model:     " << c.n_layer << " layers, d_model " << c.d_model << ", " << c.n_head
            << " heads: " << c.parameter_count() << " parameters (Ψ)\n"
            << "training:  " << book::dtype_name(o.precision) << ", " << o.micro_batch
            << " sequences x 2 micro-batches per step, " << o.steps << " steps; buckets of "
            << o.bucket_kib << " KiB; N thread ranks\n"
            << "columns:   bytes of the rank with the most model state (parameters, gradients, "
               "master, Adam), by the memory tracker; sent/step by rank 0's counters\n\n";
  std::vector<Row> rows;
  for (Stage s : o.stages) {
    for (int n : o.ranks) {
      std::cerr << "zero: " << stage_name(s) << " at N=" << n << " ...\n";
      rows.push_back(measure(o, s, n));
    }
  }
  const book::Table measured = measured_table(rows);
  const book::Table paper = formula_table(o);
  std::cout << measured.markdown() << "\n" << paper.markdown() << "\n";
  const std::string dir = book::results_dir();
  measured.write_csv(dir + "/ch06_zero.csv");
  measured.write_json(dir + "/ch06_zero.json");
  paper.write_csv(dir + "/ch06_formulas.csv");
  paper.write_json(dir + "/ch06_formulas.json");
  std::cout << "wrote " << dir << "/ch06_zero.{csv,json} and ch06_formulas.{csv,json}\n";
  if (o.trace)
    for (bool prefetch : {true, false}) trace_zero3(o, prefetch);
  if (o.tour) print_tour(o, rows, paper);
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return book::run_main(argc, argv, body); }
