/// @file
/// The steps of the ladder stage (ladder.cc): measure the machine's ceilings, run and time every
/// rung at one size against OpenBLAS, then report (the table, the plot, the tour lines).
#pragma once

#include <string>
#include <vector>

#include "common/table.h"

namespace book::gemm::ladder {

/// The stage's command line.
struct Options {
  std::vector<int> sizes{256, 512, 1024, 2048};  ///< n of each run (m = n = k)
  bool tour = false;             ///< print the tour lines (and run n = 1024 alone, unless --sizes)
  bool slow_everywhere = false;  ///< run rungs 1–3 above n = 1024 too (minutes)
};

/// Parses the stage's flags (the arguments after the program's name): `--tour`, `--big` (adds
/// n = 4096), `--sizes=N,N,...` (1 to 16384 each), `--slow`.
/// @throws book::UsageError for anything else, a malformed or out-of-range size included (say
///   `--sizes=5x` or `--sizes=1e3`); book::HelpRequested for `--help`.
Options parse_options(const std::vector<std::string>& arguments);

/// The machine's ceilings on one thread and on all hardware threads, measured (peak.h).
struct Ceilings {
  int threads;        ///< all hardware threads
  double avx2_1t;     ///< FP32 peak with AVX2 FMA, GFLOP/s, one thread
  double avx2_all;    ///< the same on all threads
  double avx512_1t;   ///< FP32 peak with AVX-512 FMA (0 without AVX-512F), one thread
  double avx512_all;  ///< the same on all threads
  double triad_1t;    ///< triad bandwidth, GB/s, one thread
  double triad_all;   ///< the same on all threads
  /// The machine's peak (the wider of AVX2 and AVX-512) on one or all threads.
  double peak(bool all) const;
  /// The AVX2 peak on one or all threads.
  double avx2(bool all) const { return all ? avx2_all : avx2_1t; }
  /// The triad bandwidth on one or all threads.
  double triad(bool all) const { return all ? triad_all : triad_1t; }
};

/// Measures the ceilings on 1 and `threads` threads (a few seconds).
Ceilings measure_ceilings(int threads);

/// Prints the ceilings table (with the micro-kernel's own speed in L1 and the ridge points).
void print_ceilings(const Ceilings& ceilings);

/// One row of the ladder: a rung (or OpenBLAS) at one size.
struct Row {
  std::string name;      ///< "05 packing", "OpenBLAS 1 thread", ...
  int n;                 ///< m = n = k
  int threads;           ///< threads it ran on
  double gflops;         ///< median GFLOP/s; 0 when it did not run
  std::string note;      ///< why it did not run ("skipped", "not started", "WRONG")
  double ratio_1t = 0;   ///< GFLOP/s ÷ OpenBLAS's on one thread, timed in turns with this row
  double ratio_all = 0;  ///< GFLOP/s ÷ OpenBLAS's on all threads
};

/// Checks every rung at size n against OpenBLAS, then times each against OpenBLAS on one and on
/// all threads (rungs 1–3 only up to n = 1024 unless `slow_everywhere`); returns the OpenBLAS rows
/// first, then one row per rung.
std::vector<Row> run_size(int n, bool slow_everywhere, int all_threads);

/// The ladder table: GFLOP/s, % of the peaks, ratios to OpenBLAS, flop/B from DRAM, % of roof.
Table ladder_table(const std::vector<Row>& rows, const Ceilings& ceilings);

/// Writes the GFLOP/s-per-size plot (gnuplot, where installed) next to the CSV.
void write_plot(const std::vector<Row>& rows, const std::string& path_stem);

/// Prints the tour's lines: the best one-thread and multithreaded rungs at n_tour against
/// OpenBLAS, and naive against the best.
void print_tour_lines(const std::vector<Row>& rows, const Ceilings& ceilings, int n_tour);

}  // namespace book::gemm::ladder
