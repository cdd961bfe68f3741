/// @file
/// The fast CPU paged attention (chapter code, not an exercise): the reference kernel's math
/// (paged_attention.h), vectorised and spread over threads.
///
/// Per query and head, three passes: the scores q·K_t of every position, block by block through
/// the table (each block's keys for one head are block_size · head_dim consecutive floats, read
/// once); a softmax over the scores, which now sit in one contiguous scratch array (vector exp);
/// and Σ_t p_t·V_t block by block. Every sum runs in an order that depends only on head_dim and
/// the position, never on where a block boundary falls: the same query gives bit-identical
/// outputs for any block size, the contiguous cache (one block of max_len) included, and for any
/// thread count. The (query, head) pairs of one call are split into one contiguous range per
/// thread.
///
/// The passes exist three times: AVX-512 (16 floats a register), AVX2 + FMA (8; the book's
/// x86-64-v3 build), and plain loops. The build targets x86-64-v3 so that its binaries run on CPUs
/// without AVX-512; the AVX-512 code is compiled per function and chosen at run time, where the
/// CPU has AVX-512F. Each path gives the same bits on every layout; two paths differ in rounding.
#pragma once

#include <span>
#include <vector>

#include "chapters/10_paged_attention/paged_attention.h"
#include "chapters/10_paged_attention/thread_team.h"

namespace book::kv {

/// The instruction sets the fast kernel has code for, slowest first.
enum class KernelPath {
  kPlain,  ///< plain loops (whatever the compiler makes of them)
  kAvx2,   ///< AVX2 + FMA, 8 floats a register
  kAvx512  ///< AVX-512F, 16 floats a register, masked remainders
};

/// "plain loops", "AVX2 + FMA" or "AVX-512": what the bench and the stage print.
const char* kernel_path_name(KernelPath path);
/// Whether `path` can run here: plain loops always; AVX2 + FMA where the build targets them (the
/// book's x86-64-v3 default); AVX-512 on an x86-64 GCC/Clang build where this CPU has AVX-512F
/// (asked at run time).
bool kernel_path_available(KernelPath path);
/// The fastest available path: what CpuPagedAttention runs unless told otherwise.
KernelPath best_kernel_path();

/// The fast kernel with its threads and per-thread scratch, kept between calls.
class CpuPagedAttention {
 public:
  /// `threads` threads (the caller is one of them) running `path`. Throws book::Error if
  /// threads < 1 or the path cannot run here (kernel_path_available).
  explicit CpuPagedAttention(int threads = 1, KernelPath path = best_kernel_path());
  /// out = softmax(q·Kᵀ/√d)·V for every query and head, as paged_attention_reference defines it
  /// (same arguments, same checks), to within float rounding.
  void run(const LayerKvView& kv, std::span<const AttentionQuery> queries);
  /// Threads used.
  int threads() const { return team_.size(); }
  /// The instruction set this kernel runs.
  KernelPath path() const { return path_; }
  /// Its name: "AVX-512", "AVX2 + FMA" or "plain loops".
  const char* path_name() const { return kernel_path_name(path_); }

 private:
  using AttendFn = void (*)(const LayerKvView&, const AttentionQuery&, int first_head, int end_head,
                            float* scratch);
  ThreadTeam team_;
  KernelPath path_;
  AttendFn attend_;
  std::vector<std::vector<float>> scores_;  // one scratch per thread: every head's scores
};

}  // namespace book::kv
