#include "chapters/01_gemm_cpu/dispatch.h"

#include <algorithm>
#include <array>
#include <thread>

#include "chapters/01_gemm_cpu/args.h"
#include "chapters/01_gemm_cpu/engine/engine.h"
#include "chapters/01_gemm_cpu/gemm.h"
#include "common/check.h"

namespace book::gemm {
namespace {

// Rungs 7 to 9: the engine with one piece from the track (gemm.h: yours with --config=exercises,
// else the reference) and its own for the rest, so each rung measures exactly what its piece adds.
//! [rungs-7-to-9]
void matmul_edges(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c,
                  int ldc) {
  engine::Pieces pieces = engine::kOwnPieces;
  pieces.pack_padded_panel = pack_padded_panel;
  pieces.write_partial_tile = write_partial_tile;
  engine::five_loops(engine::plain(m, n, k, a, lda, b, ldb, c, ldc), engine::kAvx2Kernel, 1,
                     pieces);
}

void matmul_avx512(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c,
                   int ldc) {
  engine::KernelSpec kernel = engine::kAvx2Kernel;  // without AVX-512F: rung 7's engine
  if (engine::has_avx512()) {
    kernel = engine::kAvx512Kernel;
    kernel.fn = kernel_12x32_avx512;
  }
  engine::five_loops(engine::plain(m, n, k, a, lda, b, ldb, c, ldc), kernel, 1);
}

void matmul_threads(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c,
                    int ldc) {
  engine::Pieces pieces = engine::kOwnPieces;
  pieces.five_loops_thread = five_loops_thread;
  const int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  engine::five_loops(engine::plain(m, n, k, a, lda, b, ldb, c, ldc), engine::best_kernel(), threads,
                     pieces);
}
//! [rungs-7-to-9]
using RungFn = void (*)(int, int, int, const float*, int, const float*, int, float*, int);

struct RungInfo {
  Rung rung;
  const char* name;
  RungFn fn;
};

constexpr std::array<RungInfo, 9> kRungs{{
    {Rung::kNaive, "01 naive", matmul_naive},
    {Rung::kReorder, "02 reorder", matmul_reorder},
    {Rung::kBlocked, "03 blocking", matmul_blocked},
    {Rung::kMicrokernel, "04 micro-kernel", matmul_microkernel},
    {Rung::kPacked, "05 packing", matmul_packed},
    {Rung::kFiveLoops, "06 five loops", matmul_five_loops},
    {Rung::kEdges, "07 edges", matmul_edges},
    {Rung::kAvx512, "08 avx-512", matmul_avx512},
    {Rung::kThreads, "09 threads", matmul_threads},
}};

constexpr std::array<Rung, 9> kOrder{Rung::kNaive,       Rung::kReorder, Rung::kBlocked,
                                     Rung::kMicrokernel, Rung::kPacked,  Rung::kFiveLoops,
                                     Rung::kEdges,       Rung::kAvx512,  Rung::kThreads};

const RungInfo& info(Rung rung) {
  const int index = static_cast<int>(rung) - 1;
  BOOK_CHECK(index >= 0 && index < static_cast<int>(kRungs.size()),
             "unknown rung " << static_cast<int>(rung) << "; rungs are 1.." << kRungs.size());
  return kRungs[index];
}
}  // namespace

std::span<const Rung> all_rungs() { return kOrder; }

std::string rung_name(Rung rung) { return info(rung).name; }

std::string rung_exercise_id(Rung rung) {
  const int number = static_cast<int>(info(rung).rung);
  return std::string("gemm.0") + static_cast<char>('0' + number);
}

bool rung_is_multithreaded(Rung rung) { return info(rung).rung == Rung::kThreads; }

void matmul(Rung rung, int m, int n, int k, const float* a, int lda, const float* b, int ldb,
            float* c, int ldc) {
  const RungInfo& chosen = info(rung);
  check_gemm_args("matmul", m, n, k, a, lda, k, b, ldb, n, c, ldc);
  chosen.fn(m, n, k, a, lda, b, ldb, c, ldc);
}

}  // namespace book::gemm
