// The stage: every rung of the ladder at several sizes, checked against OpenBLAS, then timed
// against OpenBLAS (one thread and all threads) and against this machine's measured ceilings.
//
//   bazel run -c opt //chapters/01_gemm_cpu:ladder              sizes 256 512 1024 2048
//   bazel run -c opt //chapters/01_gemm_cpu:ladder -- --big     ... and 4096
//   bazel run -c opt //chapters/01_gemm_cpu:ladder -- --tour    a quick subset + tour lines
//   bazel run -c opt //chapters/01_gemm_cpu:ladder -- --sizes=1000,1024
//   OPENBLAS_CORETYPE=Haswell bazel run ...   OpenBLAS on its AVX2 kernels (like for like with rung
//   7)
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "chapters/01_gemm_cpu/ladder_steps.h"
#include "chapters/01_gemm_cpu/openblas_peer.h"
#include "common/check.h"
#include "common/table.h"

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

// The tour's size: the first size of at least 1024, else the largest.
int tour_size(const std::vector<int>& sizes) {
  int largest = 0;
  for (int n : sizes) {
    if (n >= 1024) return n;
    largest = std::max(largest, n);
  }
  return largest;
}

int run(const Options& options) {
  const int all_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::cout << "OpenBLAS core: " << openblas_core_name() << " (cblas_sgemm from "
            << openblas_cblas_library() << ")\n";
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
  const std::string dir = results_dir();
  table.write_csv(dir + "/01_gemm_cpu_ladder.csv");
  table.write_json(dir + "/01_gemm_cpu_ladder.json");
  std::cout << "wrote " << dir << "/01_gemm_cpu_ladder.{csv,json}\n";
  ladder::write_plot(rows);
  ladder::print_tour_lines(rows, ceilings, tour_size(options.sizes));
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
