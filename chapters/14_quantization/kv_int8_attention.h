/// @file
/// Paged attention over an INT8 KV cache (chapter 10's PagedKvCache with KvPrecision::kInt8):
/// keys and values are read as bytes and widened to float in registers, the scales folded in
/// once per head instead of once per number.
///
/// With K_t = s_K · k_t and V_t = s_V · v_t (k_t, v_t the INT8 codes of head h):
///   score_t = q · K_t / √d = (q · s_K / √d) · k_t,   out = s_V · Σ_t p_t · v_t / Σ_t p_t,
/// so the query is scaled once, every dot product multiplies floats by widened bytes, and the
/// value scale and the softmax's division are one multiply per output number. The FP32 kernel
/// reads 4 bytes per number, this one 1: decode attention streams the cache, so the bytes are the
/// time (chapter 10's bench). The queries and outputs stay FP32.
///
/// Two implementations: a plain loop (the readable one, what the tests hold the fast one to) and
/// a vectorised one (AVX-512 with masked tails, or AVX2 + FMA; chosen at run time like chapter
/// 10's CpuPagedAttention, whose KernelPath it reuses) with threads over (query, head) pairs. The
/// dot products and weighted sums are vectorised; the softmax uses std::exp in every path (it
/// reads no cache bytes, so INT8 changes nothing there).
#pragma once

#include <span>
#include <vector>

#include "chapters/10_paged_attention/attention_cpu.h"
#include "chapters/10_paged_attention/kv_precision.h"
#include "chapters/10_paged_attention/model_runner.h"
#include "chapters/10_paged_attention/paged_attention.h"
#include "chapters/10_paged_attention/thread_team.h"

namespace book::quant {

/// Throws book::Error (naming `who`) unless the view is well formed (pointers, positive sizes,
/// every scale finite and > 0) and every query is (kv::check_attention_args' checks).
void check_int8_attention_args(const char* who, const kv::LayerKvInt8View& kv,
                               std::span<const kv::AttentionQuery> queries);

/// out[h] = softmax_t(q·K_t/√d) · V_t for every query and head, K and V dequantised from the
/// INT8 view as the file comment says: plain loops, one query and head at a time. Checks its
/// arguments first (check_int8_attention_args).
void paged_attention_int8_plain(const kv::LayerKvInt8View& kv,
                                std::span<const kv::AttentionQuery> queries);

/// The vectorised INT8 kernel with its threads and per-thread scratch, kept between calls.
class Int8PagedAttention {
 public:
  /// `threads` threads (the caller one of them) running `path`. Throws book::Error if threads < 1
  /// or the path cannot run here (kv::kernel_path_available).
  explicit Int8PagedAttention(int threads = 1, kv::KernelPath path = kv::best_kernel_path());
  /// What paged_attention_int8_plain computes (same checks), to within float rounding.
  void run(const kv::LayerKvInt8View& kv, std::span<const kv::AttentionQuery> queries);
  kv::KernelPath path() const { return path_; }                          ///< instruction set
  const char* path_name() const { return kv::kernel_path_name(path_); }  ///< its name
  int threads() const { return team_.size(); }                           ///< threads used

  /// One (query, heads [h0, h1)) piece of work with a scratch of context_len floats.
  using AttendFn = void (*)(const kv::LayerKvInt8View&, const kv::AttentionQuery&, int h0, int h1,
                            float* scratch);

 private:
  kv::ThreadTeam team_;
  kv::KernelPath path_;
  AttendFn attend_;
  std::vector<std::vector<float>> scratch_;  // one per thread
};

/// Serves `runner`'s INT8 cache: installs the vectorised kernel (`threads` threads) with
/// ModelRunner::use_attention. Throws book::Error if the runner's cache is not INT8 (an FP32
/// cache is served by chapter 10's own kernels) or threads < 1.
void use_int8_attention(kv::ModelRunner& runner, int threads = 1);

}  // namespace book::quant
