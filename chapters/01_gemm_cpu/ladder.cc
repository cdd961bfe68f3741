// The stage: every rung of the ladder at several sizes, checked against OpenBLAS, then timed
// against OpenBLAS (one thread and all threads) and against this machine's measured ceilings.
//
//   bazel run -c opt //chapters/01_gemm_cpu:ladder              sizes 256 512 1024 2048
//   bazel run -c opt //chapters/01_gemm_cpu:ladder -- --big     ... and 4096
//   bazel run -c opt //chapters/01_gemm_cpu:ladder -- --tour    a quick subset + tour lines
//   bazel run -c opt //chapters/01_gemm_cpu:ladder -- --sizes=1000,1024
//   bazel run -c opt //chapters/01_gemm_cpu:ladder -- --help
//   BOOK_PEERS_OPENBLAS=Haswell bazel run ... OpenBLAS on its AVX2 kernels (like for like, rung 7)
// OpenBLAS runs its best kernels for this CPU, checked, whatever it picked itself
// (common/peers.h): the program may start itself again once to set that up.
#include <algorithm>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "chapters/01_gemm_cpu/ladder_steps.h"
#include "chapters/01_gemm_cpu/openblas_peer.h"
#include "common/machine_load.h"
#include "common/main.h"
#include "common/peers.h"
#include "common/table.h"
#include "common/track.h"

namespace book::gemm {
namespace {

// The tour's size: the first size of at least 1024, else the largest.
int tour_size(const std::vector<int>& sizes) {
  int largest = 0;
  for (int n : sizes) {
    if (n >= 1024) return n;
    largest = std::max(largest, n);
  }
  return largest;
}

int body(int argc, char** argv) {
  const ladder::Options options = ladder::parse_options({argv + 1, argv + argc});
  book::print_machine_load();
  if (options.tour)
    std::cout << "tour-config: 01 | ladder --tour: every rung at n = " << tour_size(options.sizes)
              << " only, one thread and all " << std::max(1u, std::thread::hardware_concurrency())
              << " (the chapter's full table: n = 256, 512, 1024, 2048; `ladder` without --tour)\n";
  const int all_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::cout << "peer: " << peers::openblas_description() << " (cblas_sgemm from "
            << openblas_cblas_library() << ")\n";
  const std::string peer_warning = peers::not_at_best_warning();
  if (!peer_warning.empty())
    std::cout << "WARNING: " << peer_warning << ": its ratios are not results\n";
  const ladder::Ceilings ceilings = ladder::measure_ceilings(all_threads);
  ladder::print_ceilings(ceilings);

  std::vector<ladder::Row> rows;
  for (int n : options.sizes) {
    const std::vector<ladder::Row> at_n = ladder::run_size(n, options.slow_everywhere, all_threads);
    rows.insert(rows.end(), at_n.begin(), at_n.end());
  }

  const Table table = ladder::ladder_table(rows, ceilings);
  std::cout
      << "GEMM n×n×n, FP32, row-major; GFLOP/s = 2n^3 / median time. A GEMM that moves each "
         "matrix once does n/6 flop per byte; the roof is min(FMA peak, triad bandwidth × n/6), "
         "which is the FMA peak once n/6 exceeds the ridge point.\n\n"
      << table.markdown() << "\n";
  // The exercise track's results get their own names, so your rungs never overwrite the
  // reference's table and plot; the tour's one size makes no plot.
  const std::string dir = results_dir();
  const std::string stem =
      exercise_track() ? "/ch01_gemm_cpu_ladder_exercises" : "/ch01_gemm_cpu_ladder";
  table.write_csv(dir + stem + ".csv");
  table.write_json(dir + stem + ".json");
  peers::peers_table().write_json(dir + stem + "_peers.json");
  std::cout << "wrote " << dir << stem << ".{csv,json} and " << stem.substr(1) << "_peers.json\n";
  if (!options.tour) ladder::write_plot(rows, dir + stem);
  ladder::print_tour_lines(rows, ceilings, tour_size(options.sizes));
  return 0;
}

}  // namespace
}  // namespace book::gemm

int main(int argc, char** argv) {
  book::peers::use_peers_at_their_best(argc, argv);
  return book::run_main(argc, argv, book::gemm::body);
}
