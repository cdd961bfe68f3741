// The stage's tables and tour lines.
#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string>

#include "chapters/07_tensor_parallel/tp_stage.h"

namespace book::tp {
namespace {

std::string collectives(const CollectiveCounts& c) {
  std::ostringstream out;
  const char* sep = "";
  if (c.all_reduces) out << c.all_reduces << " AR", sep = " + ";
  if (c.all_gathers) out << sep << c.all_gathers << " AG", sep = " + ";
  if (c.reduce_scatters) out << sep << c.reduce_scatters << " RS";
  return out.str().empty() ? "none" : out.str();
}

std::string scientific(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1e", value);
  return text;
}

std::string milliseconds(double seconds) { return fixed(seconds * 1e3, 2) + " ms"; }

std::string megabytes(double bytes) { return fixed(bytes / 1e6, 1) + " MB"; }

// The row for (t, sp), or null.
const TensorParallelRow* find(const std::vector<TensorParallelRow>& rows, int t,
                              SequenceParallel sp) {
  for (const auto& row : rows)
    if (row.t == t && row.sequence_parallel == sp) return &row;
  return nullptr;
}

}  // namespace

Table tensor_parallel_table(const std::vector<TensorParallelRow>& rows, const OneDeviceRun& one) {
  Table table({"t", "SP", "params/rank (B)", "acts/layer/rank (B)", "x t=1", "Megatron x t=1",
               "collectives/layer fwd; bwd", "sent/layer/rank (B)", "sent/step/rank (B)",
               "counted = formula", "step ms", "x t=1 step", "max dloss/loss"});
  const TensorParallelRow* base = find(rows, 1, SequenceParallel::kOff);
  for (const auto& row : rows) {
    const bool exact = row.parameter_bytes == row.parameter_formula &&
                       row.layer_activation_bytes == row.layer_activation_formula &&
                       row.layer_bytes_sent == row.layer_bytes_formula &&
                       row.step_bytes_sent == row.step_bytes_formula;
    table.add_row(
        {std::to_string(row.t), sequence_parallel_name(row.sequence_parallel),
         std::to_string(row.parameter_bytes), std::to_string(row.layer_activation_bytes),
         base ? fixed(double(row.layer_activation_bytes) / base->layer_activation_bytes, 3) : "-",
         base ? fixed(row.megatron_layer_bytes / base->megatron_layer_bytes, 3) : "-",
         collectives(row.layer_forward) + "; " + collectives(row.layer_backward),
         std::to_string(row.layer_bytes_sent), std::to_string(row.step_bytes_sent),
         exact ? "yes" : "NO", fixed(row.step_ms, 2),
         base ? fixed(row.step_ms / base->step_ms, 2) : "-", scientific(row.max_loss_deviation)});
  }
  table.add_row({"ch. 4", "-", "-", "-", "-", "-", "one device, no collectives", "0", "0", "-",
                 fixed(one.step_ms, 2), base ? fixed(one.step_ms / base->step_ms, 2) : "-", "0"});
  return table;
}

Table bandwidth_table(const std::vector<BandwidthRow>& rows) {
  Table table({"traffic (GPT-3 175B, s=2048, b=1, BF16)", "bytes per GPU", "time on NVLink",
               "time on IB NDR", "compute at peak", "NVLink / compute", "IB / compute"});
  for (const auto& row : rows)
    table.add_row({row.what, megabytes(row.bytes), milliseconds(row.nvlink_seconds),
                   milliseconds(row.network_seconds), milliseconds(row.compute_seconds),
                   fixed(row.nvlink_seconds / row.compute_seconds, 2),
                   fixed(row.network_seconds / row.compute_seconds, 2)});
  return table;
}

Table expert_parallel_table(const std::vector<ExpertParallelRow>& rows) {
  Table table({"EP", "tokens/rank", "kept", "dropped", "rows to other ranks",
               "all-to-all B sent (rank 0)", "= formula", "busiest expert / mean",
               "max |y - single-rank y|"});
  for (const auto& row : rows)
    table.add_row({std::to_string(row.ep), std::to_string(row.tokens), std::to_string(row.kept),
                   std::to_string(row.dropped), std::to_string(row.rows_to_others),
                   std::to_string(row.bytes_sent),
                   row.bytes_sent == row.bytes_formula ? "yes" : "NO",
                   fixed(row.max_over_mean_load, 2), scientific(row.max_output_difference)});
  return table;
}

Table load_balance_table(const std::vector<BalanceStep>& steps) {
  Table table(
      {"router step", "aux loss", "dropped", "busiest expert / mean", "choices per expert"});
  for (const auto& step : steps) {
    std::ostringstream load;
    for (std::size_t e = 0; e < step.load.size(); ++e) load << (e ? " " : "") << step.load[e];
    table.add_row({std::to_string(step.step), fixed(step.aux_loss, 5),
                   fixed(100 * step.dropped, 1) + "%", fixed(step.max_over_mean, 2), load.str()});
  }
  return table;
}

std::vector<std::string> tour_lines(const std::vector<TensorParallelRow>& rows,
                                    const OneDeviceRun& one,
                                    const std::vector<BandwidthRow>& bandwidth,
                                    const std::vector<ExpertParallelRow>& experts,
                                    const std::vector<BalanceStep>& balance) {
  std::vector<std::string> lines;
  int top = 1;
  for (const auto& row : rows) top = std::max(top, row.t);
  const TensorParallelRow* off = find(rows, top, SequenceParallel::kOff);
  const TensorParallelRow* on = find(rows, top, SequenceParallel::kOn);
  const TensorParallelRow* base = find(rows, 1, SequenceParallel::kOff);
  const std::string t = std::to_string(top);
  if (off != nullptr && top > 1) {
    lines.push_back(
        "tour: 07 | TP collectives per layer, t=" + t + " (threads, counted) | " +
        collectives(off->layer_forward) + " fwd + " + collectives(off->layer_backward) +
        " bwd, each b*s*h = " + std::to_string(off->layer_forward.all_reduce_elements / 2) +
        " elements; " + std::to_string(off->layer_bytes_sent) +
        " B sent/rank/layer = ring formula | Megatron: 2 all-reduces forward + 2 backward per "
        "layer");
  }
  if (off != nullptr && on != nullptr && base != nullptr && top > 1)
    lines.push_back(
        "tour: 07 | activations/layer/rank, t=" + t + ", SP off -> on (measured = formula) | " +
        fixed(off->layer_activation_bytes / 1024.0, 1) + " KiB -> " +
        fixed(on->layer_activation_bytes / 1024.0, 1) + " KiB (" +
        fixed(double(off->layer_activation_bytes) / base->layer_activation_bytes, 2) + " -> " +
        fixed(double(on->layer_activation_bytes) / base->layer_activation_bytes, 2) +
        " of t=1) | TP leaves LayerNorm/residual activations whole; SP divides them by t too "
        "(Korthikanti et al. 2022)");
  if (off != nullptr && base != nullptr && top > 1)
    lines.push_back("tour: 07 | parameter bytes/rank, t=" + t + " vs t=1 (measured = formula) | " +
                    fixed(double(off->parameter_bytes) / base->parameter_bytes, 3) +
                    "x | each rank holds 1/t of every weight matrix and of the vocabulary");
  double worst = 0;
  for (const auto& row : rows) worst = std::max(worst, row.max_loss_deviation);
  lines.push_back("tour: 07 | max relative loss deviation vs chapter 4, every degree and SP, " +
                  std::to_string(one.losses.size()) + " steps | " + scientific(worst) +
                  " | tensor/sequence parallelism is exact up to float summation order");
  if (off != nullptr && base != nullptr && top > 1)
    lines.push_back(
        "tour: 07 | step time t=" + t + " vs t=1 (threads on this CPU, median of the steps) | " +
        fixed(off->step_ms / base->step_ms, 2) +
        "x | no speed-up on a CPU: ranks share cores and every layer waits on 4 collectives");
  for (const auto& row : bandwidth)
    if (row.what.rfind("TP t=8", 0) == 0)
      lines.push_back(
          "tour: 07 | GPT-3 175B layer, TP t=8 traffic: NVLink vs IB NDR vs compute at peak "
          "(model) | " +
          milliseconds(row.nvlink_seconds) + " vs " + milliseconds(row.network_seconds) + " vs " +
          milliseconds(row.compute_seconds) +
          " | TP stays inside an NVLink node; PP's boundary traffic crosses nodes");
  for (const auto& row : experts)
    if (row.ep == 4 || (row.ep == experts.back().ep && experts.back().ep < 4))
      lines.push_back("tour: 07 | MoE all-to-all bytes sent by rank 0, EP=" +
                      std::to_string(row.ep) + ", " + std::to_string(row.tokens) +
                      " tokens/rank (counted) | " + std::to_string(row.bytes_sent) +
                      " B = (rows out + rows back) x h x 4 B + counts | EP's all-to-all volume = "
                      "routed tokens x h x element size");
  if (balance.size() >= 2)
    lines.push_back(
        "tour: 07 | router trained on the load-balancing loss, " +
        std::to_string(balance.back().step) + " steps: busiest expert / mean, dropped | " +
        fixed(balance.front().max_over_mean, 2) + " -> " + fixed(balance.back().max_over_mean, 2) +
        ", " + fixed(100 * balance.front().dropped, 1) + "% -> " +
        fixed(100 * balance.back().dropped, 1) +
        "% | Switch Transformers' auxiliary loss spreads tokens over experts");
  return lines;
}

}  // namespace book::tp
