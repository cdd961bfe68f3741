// The roofline stage: `roofline [--n 4096 --k 4096 --max-m 512 --repeats 5]` times chapter 1's
// sgemm on one linear layer for m = 1, 2, 4, ... max-m tokens, prints FLOPs, bytes, intensity
// and GFLOP/s against the measured ceilings, the knee in tokens, and writes
// results/ch13_roofline.{csv,png}. `--tour`: m = 1, 8, 64, 512 with 2 repeats.
#include <cstdlib>
#include <fstream>
#include <iostream>

#include "chapters/01_gemm_cpu/sgemm.h"
#include "chapters/13_disaggregation_speculation/roofline.h"
#include "common/flags.h"
#include "common/machine_load.h"
#include "common/main.h"
#include "common/table.h"

namespace {

using namespace book::roofline;

void write_plot(const std::vector<Point>& points, const Ceilings& c, int n, int k,
                const std::string& stem) {
  const std::string data = stem + ".dat", script = stem + ".gp", png = stem + ".png";
  {
    std::ofstream out(data);
    for (const Point& p : points) out << p.intensity << " " << p.gflops << " " << p.m << "\n";
    std::ofstream gp(script);
    gp << "set terminal pngcairo size 800,500 font ',10'\nset output '" << png << "'\n"
       << "set title 'One " << k << " x " << n << " FP32 linear layer, m tokens per step (sgemm)'\n"
       << "set xlabel 'arithmetic intensity (FLOP/byte)'\nset ylabel 'GFLOP/s'\n"
       << "set logscale xy 2\nset grid\nset key bottom right\nset xrange [0.25:512]\n"
       << "peak = " << c.peak_gflops << "\nbw = " << c.bandwidth_gbs << "\n"
       << "roof(x) = (bw * x < peak) ? bw * x : peak\nset samples 400\n"
       << "plot roof(x) with lines lw 2 lc rgb 'black' title sprintf('measured roofline: %.0f "
          "GB/s, "
          "%.0f GFLOP/s', bw, peak), \\\n"
       << "     '" << data << "' using 1:2 with linespoints lw 2 pt 7 lc rgb '#e41a1c' "
       << "title 'sgemm, m = 1 ... " << points.back().m << "', \\\n"
       << "     '" << data << "' using 1:2:(sprintf('m=%d', $3)) with labels offset 0,1 notitle\n";
  }
  std::cout << book::run_gnuplot(script, png, data) << "\n";
}

int body(int argc, char** argv) {
  int n = 4096, k = 4096, max_m = 512, repeats = 5;
  bool tour = false;
  book::Flags flags("roofline",
                    "one linear layer on sgemm, m = 1 ... max-m tokens, on the roofline");
  flags.add("n", &n, "output features").range(1, 65536);
  flags.add("k", &k, "input features").range(1, 65536);
  flags.add("max-m", &max_m, "the most tokens per step (powers of two up to it)").range(1, 65536);
  flags.add("repeats", &repeats, "timed calls per m (the median is kept)").range(1, 1000);
  flags.add("tour", &tour, "the tour's quick run: m = 1, 8, 64, 512, 2 repeats");
  flags.parse(argc, argv);
  book::print_machine_load();
  const int threads = book::gemm::sgemm_thread_count();
  std::vector<int> ms;
  if (tour) {
    ms = {1, 8, 64, 512};
    repeats = 2;
  } else {
    for (int m = 1; m <= max_m; m *= 2) ms.push_back(m);
  }
  const Ceilings c = measure_ceilings(threads);
  std::cout << "ceilings on " << threads << " threads: FP32 FMA peak "
            << book::fixed(c.peak_gflops, 1) << " GFLOP/s, triad bandwidth "
            << book::fixed(c.bandwidth_gbs, 1) << " GB/s, ridge " << book::fixed(c.ridge(), 1)
            << " FLOP/byte\n";
  const auto points = measure_linear(n, k, ms, repeats, c);
  book::Table table({"m (tokens)", "GFLOP", "MB moved", "FLOP/byte", "ms", "GFLOP/s",
                     "roofline GFLOP/s", "% of roofline", "GB/s drawn", "bound by"});
  for (const Point& p : points)
    table.add_row({std::to_string(p.m), book::fixed(linear_flops(p.m, n, k) / 1e9, 3),
                   book::fixed(linear_bytes(p.m, n, k) / 1e6, 1), book::fixed(p.intensity, 2),
                   book::fixed(p.seconds * 1e3, 2), book::fixed(p.gflops, 1),
                   book::fixed(p.attainable, 1), book::fixed(100 * p.gflops / p.attainable, 0),
                   book::fixed(p.bytes_per_s / 1e9, 1),
                   p.intensity < c.ridge() ? "memory" : "compute"});
  std::cout << table.markdown();
  const int ridge = ridge_tokens(n, k, c);
  const int free_ride = free_ride_tokens(points);
  std::cout << "knee (roofline): m = " << ridge << " tokens per step reach the ridge of "
            << book::fixed(c.ridge(), 1) << " FLOP/byte; below it a step is bandwidth-bound\n"
            << "knee (measured): up to m = " << free_ride
            << " tokens a step takes at most 1.5x the fastest step's time (the weights' read "
               "dominates); decode batches below it ride along\n";
  const std::string dir = book::results_dir();
  table.write_csv(dir + "/ch13_roofline.csv");
  write_plot(points, c, n, k, dir + "/ch13_roofline");
  if (tour) {
    std::cout << "tour-config: 13 | roofline --tour: one " << k << "x" << n
              << " FP32 layer on sgemm at m = 1, 8, 64, 512, 2 repeats (the full run: m = 1 ... "
                 "512 in powers of two, 5 repeats)\n";
    std::cout << "tour: 13 | roofline knee of a " << k << "x" << n << " layer (m where intensity "
              << "reaches peak/bandwidth) | m = " << ridge
              << " | decode (m ~ batch) is memory-bound, prefill compute-bound\n";
    std::cout << "tour: 13 | m = 1 vs m = " << points.back().m << " step time | "
              << book::fixed(points.front().seconds * 1e3, 1) << " ms vs "
              << book::fixed(points.back().seconds * 1e3, 1) << " ms | " << points.back().m
              << "x the tokens for less than " << points.back().m
              << "x the time while memory-bound\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return book::run_main(argc, argv, body); }
