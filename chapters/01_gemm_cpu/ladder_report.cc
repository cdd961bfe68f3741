// The ladder's reporting steps: the ceilings, the table, the plot and the tour lines
// (ladder_steps.h).
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>

#include "chapters/01_gemm_cpu/dispatch.h"
#include "chapters/01_gemm_cpu/ladder_steps.h"
#include "chapters/01_gemm_cpu/peak.h"
#include "chapters/01_gemm_cpu/sgemm.h"
#include "common/peers.h"
#include "common/table.h"

namespace book::gemm::ladder {

double Ceilings::peak(bool all) const {
  return std::max(all ? avx2_all : avx2_1t, all ? avx512_all : avx512_1t);
}

Ceilings measure_ceilings(int threads) {
  std::cerr << "[ladder] measuring FMA peak and triad bandwidth on 1 and " << threads
            << " threads...\n";
  return {threads,
          measure_fp32_peak_gflops(1),
          measure_fp32_peak_gflops(threads),
          measure_fp32_peak_gflops_avx512(1),
          measure_fp32_peak_gflops_avx512(threads),
          measure_triad_bandwidth_gbs(1),
          measure_triad_bandwidth_gbs(threads)};
}

void print_ceilings(const Ceilings& c) {
  std::cout << "\nMeasured ceilings (" << c.threads << " hardware threads):\n\n";
  Table table({"ceiling", "1 thread", std::to_string(c.threads) + " threads"});
  table.add_row({"FP32 peak AVX2 FMA (GFLOP/s)", fixed(c.avx2_1t, 1), fixed(c.avx2_all, 1)});
  table.add_row({"FP32 peak AVX-512 FMA (GFLOP/s)", fixed(c.avx512_1t, 1), fixed(c.avx512_all, 1)});
  table.add_row(
      {"micro-kernel alone, panels in L1 (GFLOP/s)", fixed(measure_microkernel_gflops(), 1), "-"});
  table.add_row({"triad bandwidth (GB/s)", fixed(c.triad_1t, 1), fixed(c.triad_all, 1)});
  table.add_row({"ridge point (flop/byte)", fixed(c.peak(false) / c.triad_1t, 1),
                 fixed(c.peak(true) / c.triad_all, 1)});
  std::cout << table.markdown() << "\n";
}

Table ladder_table(const std::vector<Row>& rows, const Ceilings& ceilings) {
  Table table({"rung", "n", "threads", "GFLOP/s", "% AVX2 peak", "% machine peak", "x OpenBLAS 1T",
               "x OpenBLAS all", "flop/B from DRAM", "% of roof"});
  for (const Row& row : rows) {
    const bool all = row.threads > 1;
    if (row.gflops <= 0) {
      table.add_row({row.name, std::to_string(row.n), std::to_string(row.threads), row.note, "", "",
                     "", "", "", ""});
      continue;
    }
    // flop/B from DRAM: the flops per DRAM byte the rung must achieve to run this fast if memory
    // ran at triad speed. It is at most the ridge point (GFLOP/s <= peak); compare it with the
    // reuse the rung's access pattern allows (1/32 for naive, about n/6 for a blocked GEMM).
    // The roof for this n: min(peak, bandwidth × n/6), n/6 flop/B being a GEMM that moves A, B, C
    // once.
    const double intensity = row.gflops / ceilings.triad(all);
    const double roof = std::min(ceilings.peak(all), ceilings.triad(all) * row.n / 6.0);
    table.add_row({row.name, std::to_string(row.n), std::to_string(row.threads),
                   fixed(row.gflops, 2), fixed(100 * row.gflops / ceilings.avx2(all), 1),
                   fixed(100 * row.gflops / ceilings.peak(all), 1), fixed(row.ratio_1t, 3),
                   fixed(row.ratio_all, 3), fixed(intensity, 2),
                   fixed(100 * row.gflops / roof, 1)});
  }

  return table;
}

void write_plot(const std::vector<Row>& rows, const std::string& path_stem) {
  // Only series with a point: a rung not started (or skipped) has none, and an empty block makes
  // gnuplot warn.
  std::vector<std::string> series;
  std::vector<std::string> candidates{"OpenBLAS 1 thread", "OpenBLAS all threads"};
  for (Rung rung : all_rungs()) candidates.push_back(rung_name(rung));
  for (const auto& name : candidates)
    for (const Row& row : rows)
      if (row.name == name && row.gflops > 0) {
        series.push_back(name);
        break;
      }
  const std::string data = path_stem + ".dat", script = path_stem + ".gp", png = path_stem + ".png";
  if (series.empty()) {
    std::cout << "no rung has a time to plot (none started?): plot skipped\n";
    return;
  }
  {
    std::ofstream out(data);
    for (const auto& name : series) {  // one gnuplot data block per series, titled by its header
      out << "\"" << name << "\"\n";
      for (const Row& row : rows)
        if (row.name == name && row.gflops > 0) out << row.n << " " << row.gflops << "\n";
      out << "\n\n";
    }
    std::ofstream gp(script);
    gp << "set terminal pngcairo size 1000,620 font ',11'\nset output '" << png << "'\n"
       << "set title 'CPU GEMM ladder (FP32): GFLOP/s per rung and size'\n"
       << "set xlabel 'n (m = n = k)'\nset ylabel 'GFLOP/s (log scale)'\nset logscale xy 2\n"
       << "set logscale y 10\nset key outside right\nset grid\n"
       // The peers dashed in black and grey, the rungs in nine distinct colours.
       << "set linetype 1 lc rgb 'black' dt 2 pt 7\nset linetype 2 lc rgb '#777777' dt 2 pt 7\n";
    const char* colours[] = {"#e41a1c", "#ff7f00", "#c9b400", "#4daf4a", "#00a0a0",
                             "#377eb8", "#984ea3", "#f781bf", "#a65628"};
    for (int i = 0; i < 9; ++i)
      gp << "set linetype " << i + 3 << " lc rgb '" << colours[i] << "' dt 1 pt " << (i % 6) + 1
         << "\n";
    // One plot clause per series, each in its candidate's colour whichever series are missing.
    gp << "plot ";
    for (std::size_t k = 0; k < series.size(); ++k) {
      const auto c =
          std::find(candidates.begin(), candidates.end(), series[k]) - candidates.begin();
      gp << (k ? ", \\\n     " : "") << "'" << data << "' index " << k
         << " using 1:2 with linespoints lt " << c + 1 << " lw 2 title columnheader(1)";
    }
    gp << "\n";
  }
  std::cout << run_gnuplot(script, png, data) << "\n";
}

void print_tour_lines(const std::vector<Row>& rows, const Ceilings& ceilings, int n_tour) {
  const Row* best_1t = nullptr;
  const Row* best_all = nullptr;
  for (const Row& row : rows) {
    if (row.n != n_tour || row.gflops <= 0 || row.name.rfind("OpenBLAS", 0) == 0) continue;
    const Row*& best = row.threads > 1 ? best_all : best_1t;
    if (!best || row.gflops > best->gflops) best = &row;
  }
  // The peer's kernels go into the row; a peer not at its best makes the ratio no result.
  const std::string kernels = peers::kernels_of("OpenBLAS");
  if (best_1t)
    std::cout << "tour: 01 | best 1-thread rung (" << best_1t->name << ") vs OpenBLAS (" << kernels
              << "), n=" << n_tour << " | " << fixed(best_1t->gflops, 1)
              << " GFLOP/s = " << peers::ratio_against(best_1t->ratio_1t, "OpenBLAS") << ", "
              << fixed(100 * best_1t->gflops / ceilings.peak(false), 0)
              << "% of measured peak | packing + a register tile + cache blocks (BLIS) match a "
                 "tuned BLAS\n";
  if (best_all)
    std::cout << "tour: 01 | " << best_all->threads << "-thread rung vs OpenBLAS (" << kernels
              << ", " << best_all->threads << " threads), n=" << n_tour << " | "
              << fixed(best_all->gflops, 1)
              << " GFLOP/s = " << peers::ratio_against(best_all->ratio_all, "OpenBLAS") << ", "
              << fixed(100 * best_all->gflops / ceilings.peak(true), 0)
              << "% of measured peak | GEMM is compute-bound: it scales with cores\n";
  for (const Row& row : rows)
    if (row.n == n_tour && row.name == rung_name(Rung::kNaive) && row.gflops > 0 && best_1t)
      std::cout << "tour: 01 | naive i-j-k vs best 1-thread rung, n=" << n_tour << " | "
                << fixed(best_1t->gflops / row.gflops, 0)
                << "x faster | the memory hierarchy, not the flops, separates naive from tuned "
                   "(100-1000x)\n";
}

}  // namespace book::gemm::ladder
