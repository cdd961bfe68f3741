// The tune stage: tries cache-block sizes around this machine's L1 and L2 for the kernel sgemm uses
// here, each timed in turns with the defaults of chapters/01_gemm_cpu/engine/kernels.cc, and prints
// them best first. The defaults were measured on one machine; this measures yours.
//
//   bazel run -c opt //chapters/01_gemm_cpu:tune                  n = 1024, one thread
//   bazel run -c opt //chapters/01_gemm_cpu:tune -- --n=2048 --threads=2
//   bazel run -c opt //chapters/01_gemm_cpu:tune -- --l1=32768 --l2=1048576   other cache sizes
//   bazel run -c opt //chapters/01_gemm_cpu:tune -- --help
#include <algorithm>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "chapters/01_gemm_cpu/args.h"
#include "chapters/01_gemm_cpu/tune.h"
#include "common/buffer.h"
#include "common/check.h"
#include "common/machine_load.h"
#include "common/main.h"
#include "common/rng.h"
#include "common/table.h"
#include "common/timer.h"

namespace book::gemm {
namespace {

int body(int argc, char** argv) {
  const TuneOptions options = parse_tune_options({argv + 1, argv + argc});
  book::print_machine_load();
  const int n = options.n;
  const long l1 = options.l1 > 0 ? options.l1 : l1d_cache_bytes();
  const long l2 = options.l2 > 0 ? options.l2 : l2_cache_bytes();
  const KernelShape shape = best_kernel_shape();
  const BlockSizes defaults = default_block_sizes();
  std::cout << "Kernel " << shape.mr << "×" << shape.nr << "; L1d " << l1 / 1024 << " KiB, L2 "
            << l2 / 1024 << " KiB per core" << (options.l1 || options.l2 ? " (as given)" : "")
            << "; defaults " << describe(defaults) << "; n = " << n << ", " << options.threads
            << " thread(s)\n";
  std::vector<BlockSizes> candidates = block_candidates(shape, defaults.mc, l1, l2);
  BOOK_CHECK(!candidates.empty(), "tune: no block sizes fit an L1d of "
                                      << l1 << " B and an L2 of " << l2
                                      << " B (the A micro-panel needs at least "
                                      << 2 * shape.mr * 64 * 4 << " B of L1); check --l1 and --l2");

  Rng rng(20261129);
  const std::size_t size = static_cast<std::size_t>(n) * n;
  AlignedBuffer<float> a(size), b(size), c(size), reference(size);
  fill_uniform<float>(a.span(), rng);
  fill_uniform<float>(b.span(), rng);
  auto with = [&](const BlockSizes& blocks, AlignedBuffer<float>& out) {
    matmul_with_blocks(blocks, options.threads, n, n, n, a.data(), n, b.data(), n, out.data(), n);
  };
  with(defaults, reference);
  const double flops = 2.0 * n * n * n;

  Table table({"MC", "KC", "NC", "A micro-panel (KiB, % of L1)", "B block (KiB, % of L2)",
               "GFLOP/s", "x defaults"});
  struct Result {
    BlockSizes blocks;
    double gflops, ratio;
  };
  std::vector<Result> results;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const BlockSizes& blocks = candidates[i];
    with(blocks, c);
    BOOK_CHECK(close_to(c.span(), reference.span(), n),  // another KC sums in another order
               "tune: " << describe(blocks)
                        << " gives another C than the defaults: an engine bug, please report it");
    // In turns with the defaults, so a change in the machine's load hits both alike.
    std::vector<double> mine, theirs;
    const int turns = std::clamp(static_cast<int>(0.3 / (flops / 50e9)), 3, 9);
    for (int turn = 0; turn < turns; ++turn) {
      Timer timer;
      with(blocks, c);
      mine.push_back(timer.seconds());
      Timer other;
      with(defaults, c);
      theirs.push_back(other.seconds());
    }
    const double gflops = flops / median(mine) * 1e-9, ratio = median(theirs) / median(mine);
    results.push_back({blocks, gflops, ratio});
    std::cerr << "[tune] " << i + 1 << "/" << candidates.size() << " " << describe(blocks) << ": "
              << fixed(gflops, 1) << " GFLOP/s, " << fixed(ratio, 3) << "x defaults\n";
  }
  std::sort(results.begin(), results.end(),
            [](const Result& x, const Result& y) { return x.ratio > y.ratio; });
  for (const Result& r : results) {
    const double a_kib = shape.mr * r.blocks.kc * 4.0 / 1024,
                 b_kib = r.blocks.kc * r.blocks.nc * 4.0 / 1024;
    table.add_row({std::to_string(r.blocks.mc), std::to_string(r.blocks.kc),
                   std::to_string(r.blocks.nc),
                   fixed(a_kib, 1) + " (" + fixed(100 * a_kib * 1024 / l1, 0) + "%)",
                   fixed(b_kib, 0) + " (" + fixed(100 * b_kib * 1024 / l2, 0) + "%)",
                   fixed(r.gflops, 1), fixed(r.ratio, 3)});
  }
  std::cout << "\n" << table.markdown() << "\n";
  const std::string base = results_dir() + "/ch01_gemm_cpu_tune";
  table.write_csv(base + ".csv");
  table.write_json(base + ".json");
  std::cout << "wrote " << base << ".{csv,json}\n";
  const Result& best = results.front();
  std::cout
      << "best here: " << describe(best.blocks) << " at " << fixed(best.ratio, 3)
      << "x the defaults. Differences of a few percent are within the noise of one run: "
         "run again (or at another --n) before you edit chapters/01_gemm_cpu/engine/kernels.cc.\n";
  return 0;
}

}  // namespace
}  // namespace book::gemm

int main(int argc, char** argv) { return book::run_main(argc, argv, book::gemm::body); }
