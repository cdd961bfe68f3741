// The stage: every rung of the ladder at several sizes, checked against OpenBLAS, then timed
// against OpenBLAS (one thread and all threads) and against this machine's measured ceilings.
//
//   bazel run -c opt //chapters/01_gemm_cpu:ladder              sizes 256 512 1024 2048
//   bazel run -c opt //chapters/01_gemm_cpu:ladder -- --big     ... and 4096
//   bazel run -c opt //chapters/01_gemm_cpu:ladder -- --tour    a quick subset + tour lines
//   bazel run -c opt //chapters/01_gemm_cpu:ladder -- --sizes=1000,1024
//   OPENBLAS_CORETYPE=Haswell bazel run ...   OpenBLAS on its AVX2 kernels (like for like with rung
//   7)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "chapters/01_gemm_cpu/args.h"
#include "chapters/01_gemm_cpu/dispatch.h"
#include "chapters/01_gemm_cpu/openblas_peer.h"
#include "chapters/01_gemm_cpu/peak.h"
#include "chapters/01_gemm_cpu/sgemm.h"
#include "common/buffer.h"
#include "common/check.h"
#include "common/rng.h"
#include "common/table.h"
#include "common/timer.h"

namespace book::gemm {
namespace {

struct Options {
  std::vector<int> sizes{256, 512, 1024, 2048};
  bool tour = false;
  bool slow_everywhere = false;  // run rungs 1-3 above n = 1024 too (minutes)
};

Options parse(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--tour") {
      options.tour = true;
      options.sizes = {1024};
    } else if (arg == "--big") {
      options.sizes.push_back(4096);
    } else if (arg.rfind("--sizes=", 0) == 0) {
      options.sizes.clear();
      std::istringstream list(arg.substr(8));
      for (std::string item; std::getline(list, item, ',');) {
        const int n = std::atoi(item.c_str());
        BOOK_CHECK(n >= 1 && n <= 16384,
                   "--sizes wants sizes from 1 to 16384, got \"" << item << "\"");
        options.sizes.push_back(n);
      }
      BOOK_CHECK(!options.sizes.empty(), "--sizes wants a list such as --sizes=1024,2048");
    } else if (arg == "--slow") {
      options.slow_everywhere = true;
    } else {
      BOOK_CHECK(false, "unknown flag " << arg
                                        << "; use --tour (quick), --big (adds n = 4096), "
                                           "--sizes=N,N,... or --slow (rungs 1-3 at every size)");
    }
  }
  return options;
}

// Median times of `rung` and of OpenBLAS on 1 and on all threads. A one-thread rung and OpenBLAS on
// one thread are timed in turns (rung, OpenBLAS, rung, ...) so that a change in the machine's load
// hits both sides of the ratio alike. Multithreaded code is timed in blocks instead, each after one
// untimed call: OpenBLAS's worker threads keep spinning for a while after each call (tens of
// milliseconds) and would steal a core from whatever runs next, so OpenBLAS on all threads comes
// after, followed by a pause, and then a multithreaded rung gets its own block (interleaved with
// one-thread calls, its second core would start every call cold). Enough turns for ~0.6 s of the
// rung (3 to 10); a rung call longer than a second is timed once.
struct Paired {
  std::vector<double> rung, openblas_1t, openblas_all;
};

template <typename Rung, typename Peer>
Paired time_against_openblas(Rung&& rung, bool rung_multithreaded, Peer&& peer, int all_threads) {
  Paired times;
  auto time_once = [](auto&& fn) {
    Timer timer;
    fn();
    return timer.seconds();
  };
  openblas_set_threads(1);
  rung();  // warm-up (caches, page faults, thread start-up)
  const double once = time_once(rung);
  times.rung.push_back(once);
  const int turns = once > 1.0 ? 3 : std::clamp(static_cast<int>(0.6 / once), 3, 10);
  for (int turn = 0; turn < turns; ++turn) {
    times.openblas_1t.push_back(time_once(peer));
    if (once <= 1.0 && !rung_multithreaded) times.rung.push_back(time_once(rung));
  }
  openblas_set_threads(all_threads);
  peer();  // wakes its workers
  for (int turn = 0; turn < turns; ++turn) times.openblas_all.push_back(time_once(peer));
  openblas_set_threads(1);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // let its workers go to sleep
  if (rung_multithreaded && once <= 1.0) {
    rung();  // wakes its workers
    for (int turn = 0; turn < turns; ++turn) times.rung.push_back(time_once(rung));
  }
  return times;
}

struct Ceilings {
  int threads;
  double avx2_1t, avx2_all, avx512_1t, avx512_all, triad_1t, triad_all;
  double peak(bool all) const {
    return std::max(all ? avx2_all : avx2_1t, all ? avx512_all : avx512_1t);
  }
  double avx2(bool all) const { return all ? avx2_all : avx2_1t; }
  double triad(bool all) const { return all ? triad_all : triad_1t; }
};

Ceilings measure_ceilings(int threads) {
  std::cerr << "[ladder] measuring FMA peak and triad bandwidth on 1 and " << threads
            << " threads...\n";
  Ceilings c{threads,
             measure_fp32_peak_gflops(1),
             measure_fp32_peak_gflops(threads),
             measure_fp32_peak_gflops_avx512(1),
             measure_fp32_peak_gflops_avx512(threads),
             measure_triad_bandwidth_gbs(1),
             measure_triad_bandwidth_gbs(threads)};
  return c;
}

struct Row {
  std::string name;
  int n, threads;
  double gflops;  // 0 when not run
  std::string note;
  double ratio_1t = 0, ratio_all = 0;  // GFLOP/s ÷ OpenBLAS's, timed in turns with this row
};

void write_plot(const std::vector<Row>& rows, const std::vector<std::string>& series) {
  const std::string dir = results_dir();
  const std::string data = dir + "/01_gemm_cpu_ladder.dat", script = dir + "/01_gemm_cpu_ladder.gp",
                    png = dir + "/01_gemm_cpu_ladder.png";
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
    gp << "plot for [i=0:" << series.size() - 1 << "] '" << data
       << "' index i using 1:2 with linespoints lt (i+1) lw 2 title columnheader(1)\n";
  }
  if (std::system("command -v gnuplot > /dev/null 2>&1") != 0) {
    std::cout << "gnuplot not found (apt-get install gnuplot-nox): plot skipped; data in " << data
              << "\n";
    return;
  }
  const int status = std::system(("gnuplot " + script).c_str());
  std::cout << (status == 0 ? "plot: " + png : "gnuplot failed on " + script) << "\n";
}

int run(const Options& options) {
  const int all_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::cout << "OpenBLAS core: " << openblas_core_name() << " (cblas_sgemm from "
            << openblas_cblas_library() << ")\n";
  const Ceilings ceil = measure_ceilings(all_threads);
  const double ridge_1t = ceil.peak(false) / ceil.triad_1t;
  std::cout << "\nMeasured ceilings (" << all_threads << " hardware threads):\n\n";
  Table ceilings({"ceiling", "1 thread", std::to_string(all_threads) + " threads"});
  ceilings.add_row(
      {"FP32 peak AVX2 FMA (GFLOP/s)", fixed(ceil.avx2_1t, 1), fixed(ceil.avx2_all, 1)});
  ceilings.add_row(
      {"FP32 peak AVX-512 FMA (GFLOP/s)", fixed(ceil.avx512_1t, 1), fixed(ceil.avx512_all, 1)});
  ceilings.add_row(
      {"micro-kernel alone, panels in L1 (GFLOP/s)", fixed(measure_microkernel_gflops(), 1), "-"});
  ceilings.add_row({"triad bandwidth (GB/s)", fixed(ceil.triad_1t, 1), fixed(ceil.triad_all, 1)});
  ceilings.add_row(
      {"ridge point (flop/byte)", fixed(ridge_1t, 1), fixed(ceil.peak(true) / ceil.triad_all, 1)});
  std::cout << ceilings.markdown() << "\n";

  std::vector<Row> rows;
  std::map<int, std::pair<double, double>> openblas;  // n -> (1 thread, all threads) GFLOP/s
  for (int n : options.sizes) {
    Rng rng(1000 + n);
    AlignedBuffer<float> a(static_cast<std::size_t>(n) * n), b(a.size()), c(a.size()),
        ref(a.size());
    fill_uniform<float>(a.span(), rng);
    fill_uniform<float>(b.span(), rng);
    const double flops = 2.0 * n * n * n;
    auto peer = [&] { openblas_matmul(n, n, n, a.data(), n, b.data(), n, ref.data(), n); };
    openblas_set_threads(1);
    peer();                               // the reference C for the sanity checks
    std::vector<double> all_1t, all_all;  // every OpenBLAS time at this n, for its own rows
    const std::size_t first_row = rows.size();
    for (Rung rung : all_rungs()) {
      const int threads = rung_is_multithreaded(rung) ? all_threads : 1;
      Row row{rung_name(rung), n, threads, 0, ""};
      if (!options.slow_everywhere && rung <= Rung::kBlocked && n > 1024) {
        row.note = "skipped (slow; --slow runs it)";
        rows.push_back(row);
        continue;
      }
      std::fill(c.begin(), c.end(), std::nanf(""));
      try {
        auto call = [&] { matmul(rung, n, n, n, a.data(), n, b.data(), n, c.data(), n); };
        call();
        if (!close_to(c.span(), ref.span(), n)) {
          row.note = "WRONG: differs from OpenBLAS (run the tests)";
        } else {
          const Paired times =
              time_against_openblas(call, rung_is_multithreaded(rung), peer, all_threads);
          const double rung_s = median(times.rung);
          row.gflops = flops / rung_s * 1e-9;
          row.ratio_1t = median(times.openblas_1t) / rung_s;
          row.ratio_all = median(times.openblas_all) / rung_s;
          all_1t.insert(all_1t.end(), times.openblas_1t.begin(), times.openblas_1t.end());
          all_all.insert(all_all.end(), times.openblas_all.begin(), times.openblas_all.end());
        }
      } catch (const NotImplemented& not_started) {
        row.note = "not started (" + rung_exercise_id(rung) + ")";
      }
      std::cerr << "[ladder] n=" << n << " " << row.name << ": "
                << (row.gflops > 0 ? fixed(row.gflops, 2) + " GFLOP/s, " + fixed(row.ratio_1t, 2) +
                                         "x OpenBLAS 1 thread"
                                   : row.note)
                << "\n";
      rows.push_back(row);
    }
    if (all_1t.empty()) {  // every rung a stub: time OpenBLAS on its own
      const Paired times = time_against_openblas(peer, false, peer, all_threads);
      all_1t = times.openblas_1t;
      all_all = times.openblas_all;
    }
    openblas[n] = {flops / median(all_1t) * 1e-9, flops / median(all_all) * 1e-9};
    const auto [one, all] = openblas[n];
    rows.insert(rows.begin() + first_row,
                {{"OpenBLAS 1 thread", n, 1, one, "", 1.0, one / all},
                 {"OpenBLAS all threads", n, all_threads, all, "", all / one, 1.0}});
    std::cerr << "[ladder] n=" << n << " OpenBLAS: " << fixed(one, 1) << " GFLOP/s on 1 thread, "
              << fixed(all, 1) << " on " << all_threads << "\n";
  }

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
    const double intensity = row.gflops / ceil.triad(all);
    const double roof = std::min(ceil.peak(all), ceil.triad(all) * row.n / 6.0);
    table.add_row({row.name, std::to_string(row.n), std::to_string(row.threads),
                   fixed(row.gflops, 2), fixed(100 * row.gflops / ceil.avx2(all), 1),
                   fixed(100 * row.gflops / ceil.peak(all), 1), fixed(row.ratio_1t, 3),
                   fixed(row.ratio_all, 3), fixed(intensity, 2),
                   fixed(100 * row.gflops / roof, 1)});
  }
  std::cout
      << "GEMM n×n×n, FP32, row-major; GFLOP/s = 2n^3 / median time. A GEMM that moves each "
         "matrix once does n/6 flop per byte; the roof is min(FMA peak, triad bandwidth × n/6), "
         "which is the FMA peak once n/6 exceeds the ridge point.\n\n"
      << table.markdown() << "\n";
  const std::string dir = results_dir();
  table.write_csv(dir + "/01_gemm_cpu_ladder.csv");
  table.write_json(dir + "/01_gemm_cpu_ladder.json");
  std::cout << "wrote " << dir << "/01_gemm_cpu_ladder.{csv,json}\n";

  std::vector<std::string> series{"OpenBLAS 1 thread", "OpenBLAS all threads"};
  for (Rung rung : all_rungs()) series.push_back(rung_name(rung));
  write_plot(rows, series);

  // Tour lines: the best single-threaded and multithreaded rungs at the first size >= 1024.
  const int n_tour = options.sizes.back() >= 1024 ? 1024 : options.sizes.back();
  const Row* best_1t = nullptr;
  const Row* best_all = nullptr;
  for (const Row& row : rows) {
    if (row.n != n_tour || row.gflops <= 0 || row.name.rfind("OpenBLAS", 0) == 0) continue;
    const Row*& best = row.threads > 1 ? best_all : best_1t;
    if (!best || row.gflops > best->gflops) best = &row;
  }
  if (best_1t)
    std::cout << "tour: 01 | best 1-thread rung (" << best_1t->name << ") vs OpenBLAS, n=" << n_tour
              << " | " << fixed(best_1t->gflops, 1) << " GFLOP/s = " << fixed(best_1t->ratio_1t, 2)
              << "x OpenBLAS, " << fixed(100 * best_1t->gflops / ceil.peak(false), 0)
              << "% of measured peak | packing + a register tile + cache blocks (BLIS) match a "
                 "tuned BLAS\n";
  if (best_all)
    std::cout << "tour: 01 | " << best_all->threads << "-thread rung vs OpenBLAS, n=" << n_tour
              << " | " << fixed(best_all->gflops, 1)
              << " GFLOP/s = " << fixed(best_all->ratio_all, 2) << "x OpenBLAS, "
              << fixed(100 * best_all->gflops / ceil.peak(true), 0)
              << "% of measured peak | GEMM is compute-bound: it scales with cores\n";
  for (const Row& row : rows)
    if (row.n == n_tour && row.name == rung_name(Rung::kNaive) && row.gflops > 0 && best_1t)
      std::cout << "tour: 01 | naive i-j-k vs best 1-thread rung, n=" << n_tour << " | "
                << fixed(best_1t->gflops / row.gflops, 0)
                << "x faster | the memory hierarchy, not the flops, separates naive from tuned "
                   "(100-1000x)\n";
  return 0;
}

}  // namespace
}  // namespace book::gemm

int main(int argc, char** argv) {
  try {
    return book::gemm::run(book::gemm::parse(argc, argv));
  } catch (const book::Error& error) {
    std::cerr << "ladder: " << error.what() << "\n";
    return 1;
  }
}
