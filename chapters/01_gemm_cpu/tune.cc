#include "chapters/01_gemm_cpu/tune.h"

#include <unistd.h>

#include <algorithm>
#include <set>
#include <sstream>
#include <tuple>

#include "chapters/01_gemm_cpu/args.h"
#include "chapters/01_gemm_cpu/engine/engine.h"
#include "common/check.h"
#include "common/flags.h"

namespace book::gemm {

KernelShape best_kernel_shape() {
  const engine::KernelSpec& ks = engine::best_kernel();
  return {ks.mr, ks.nr};
}

BlockSizes default_block_sizes() {
  const engine::KernelSpec& ks = engine::best_kernel();
  return {ks.mc, ks.kc, ks.nc};
}

std::vector<BlockSizes> block_candidates(KernelShape shape, int mc, long l1_bytes, long l2_bytes) {
  BOOK_CHECK(shape.mr >= 1 && shape.nr >= 1,
             "block_candidates: the kernel's MR and NR must be positive, got " << shape.mr << "×"
                                                                               << shape.nr);
  BOOK_CHECK(l1_bytes > 0 && l2_bytes > 0,
             "block_candidates: cache sizes must be positive (L1d "
                 << l1_bytes << " B, L2 " << l2_bytes
                 << " B); if the C library does not know them, pass them with --l1 and --l2");
  BOOK_CHECK(
      mc >= shape.mr && mc % shape.mr == 0,
      "block_candidates: MC must be a positive multiple of MR = " << shape.mr << ", got " << mc);
  constexpr long kFloat = sizeof(float);
  std::set<std::tuple<int, int, int>> unique;
  for (int kc : {64, 96, 128, 192, 256, 384, 512, 768}) {
    if (shape.mr * kc * kFloat > l1_bytes / 2) continue;  // the A micro-panel: at most half of L1
    for (int share : {8, 4, 2}) {                         // the B block: 1/8, 1/4, 1/2 of L2
      const long columns = l2_bytes / share / (kc * kFloat);
      const int nc = static_cast<int>(columns / shape.nr * shape.nr);
      if (nc >= shape.nr) unique.insert({mc, kc, nc});
    }
  }
  std::vector<BlockSizes> out;
  for (const auto& [m, k, n] : unique) out.push_back({m, k, n});
  return out;
}

long l1d_cache_bytes() { return std::max(0L, sysconf(_SC_LEVEL1_DCACHE_SIZE)); }
long l2_cache_bytes() { return std::max(0L, sysconf(_SC_LEVEL2_CACHE_SIZE)); }

void matmul_with_blocks(const BlockSizes& blocks, int threads, int m, int n, int k, const float* a,
                        int lda, const float* b, int ldb, float* c, int ldc) {
  check_gemm_args("matmul_with_blocks", m, n, k, a, lda, k, b, ldb, n, c, ldc);
  engine::KernelSpec spec = engine::best_kernel();
  BOOK_CHECK(blocks.mc >= spec.mr && blocks.mc % spec.mr == 0,
             "matmul_with_blocks: MC must be a positive multiple of MR = " << spec.mr << ", got "
                                                                           << blocks.mc);
  BOOK_CHECK(blocks.kc >= 1, "matmul_with_blocks: KC must be >= 1, got " << blocks.kc);
  BOOK_CHECK(blocks.nc >= spec.nr && blocks.nc % spec.nr == 0,
             "matmul_with_blocks: NC must be a positive multiple of NR = " << spec.nr << ", got "
                                                                           << blocks.nc);
  BOOK_CHECK(threads >= 1, "matmul_with_blocks: threads must be >= 1, got " << threads);
  spec.mc = blocks.mc;
  spec.kc = blocks.kc;
  spec.nc = blocks.nc;
  engine::five_loops(engine::plain(m, n, k, a, lda, b, ldb, c, ldc), spec, threads);
}

TuneOptions parse_tune_options(const std::vector<std::string>& arguments) {
  TuneOptions options;
  Flags flags("tune",
              "times cache-block sizes for this machine's L1 and L2 against the engine's defaults");
  flags.add("n", &options.n, "the size timed (m = n = k)").range(64, 16384);
  flags.add("threads", &options.threads, "threads the engine runs on").range(1, 1024);
  // 0 is the default ("ask the C library"), so the range starts there; a size given must be real.
  flags.add("l1", &options.l1, "L1d bytes per core (0: ask the C library; else at least 1024)")
      .range(0, std::int64_t{1} << 40);
  flags.add("l2", &options.l2, "L2 bytes per core (0: ask the C library; else at least 1024)")
      .range(0, std::int64_t{1} << 40);
  flags.parse(arguments);
  for (const auto& [name, bytes] : {std::pair{"--l1", options.l1}, std::pair{"--l2", options.l2}})
    if (bytes > 0 && bytes < 1024)
      throw UsageError(std::string(name) +
                       " must be 0 (ask the C library) or at least 1024 bytes, got " +
                       std::to_string(bytes));
  return options;
}

std::string describe(const BlockSizes& blocks) {
  std::ostringstream out;
  out << "MC=" << blocks.mc << " KC=" << blocks.kc << " NC=" << blocks.nc;
  return out.str();
}

}  // namespace book::gemm
