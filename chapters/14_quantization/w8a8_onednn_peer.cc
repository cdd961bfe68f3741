// oneDNN's INT8 matmul as the W8A8 GEMM's peer (w8a8_onednn_peer.h).
#include "chapters/14_quantization/w8a8_onednn_peer.h"

#include <omp.h>

#include <cstdlib>
#include <oneapi/dnnl/dnnl.hpp>
#include <sstream>

#include "common/check.h"
#include "common/cpu.h"

namespace book::quant {

struct OneDnnInt8Matmul::State {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  dnnl::memory::desc src_md, dst_md;
  dnnl::matmul::primitive_desc pd;
  dnnl::matmul matmul;
  dnnl::memory weights;  // in the primitive's own blocked layout
  int tokens = 0, rows = 0, cols = 0;
};

OneDnnInt8Matmul::OneDnnInt8Matmul(std::span<const std::int8_t> w, int rows, int cols, int tokens)
    : state_(std::make_unique<State>()) {
  BOOK_CHECK(
      rows >= 1 && cols >= 1 && tokens >= 1 && w.size() == static_cast<std::size_t>(rows) * cols,
      "onednn peer: " << w.size() << " weights for a " << rows << " × " << cols << " matrix and "
                      << tokens << " tokens; sizes must be >= 1");
  using dt = dnnl::memory::data_type;
  using tag = dnnl::memory::format_tag;
  State& s = *state_;
  s.tokens = tokens;
  s.rows = rows;
  s.cols = cols;
  s.src_md = dnnl::memory::desc({tokens, cols}, dt::s8, tag::ab);
  s.dst_md = dnnl::memory::desc({tokens, rows}, dt::s32, tag::ab);
  // The weights as oneDNN sees them are [k][n]; ours, [n][k] row-major, are that matrix in
  // layout "ba". Format `any` lets the primitive choose its blocked layout.
  const dnnl::memory::desc any_md({cols, rows}, dt::s8, tag::any);
  const dnnl::memory::desc user_md({cols, rows}, dt::s8, tag::ba);
  try {
    s.pd = dnnl::matmul::primitive_desc(dnnl::matmul::desc(s.src_md, any_md, s.dst_md), s.engine);
    s.matmul = dnnl::matmul(s.pd);
    dnnl::memory user(user_md, s.engine, const_cast<std::int8_t*>(w.data()));
    s.weights = dnnl::memory(s.pd.weights_desc(), s.engine);
    dnnl::reorder(user, s.weights).execute(s.stream, user, s.weights);
    s.stream.wait();
  } catch (const dnnl::error& e) {
    BOOK_CHECK(false, "onednn peer: oneDNN refused a " << tokens << " × " << cols << " by " << cols
                                                       << " × " << rows
                                                       << " s8 matmul: " << e.what());
  }
}

OneDnnInt8Matmul::~OneDnnInt8Matmul() = default;

void OneDnnInt8Matmul::run(std::span<const std::int8_t> src, std::span<std::int32_t> acc) {
  State& s = *state_;
  BOOK_CHECK(src.size() == static_cast<std::size_t>(s.tokens) * s.cols &&
                 acc.size() == static_cast<std::size_t>(s.tokens) * s.rows,
             "onednn peer: needs " << s.tokens * s.cols << " activations and " << s.tokens * s.rows
                                   << " sums, got " << src.size() << " and " << acc.size());
  dnnl::memory src_mem(s.src_md, s.engine, const_cast<std::int8_t*>(src.data()));
  dnnl::memory dst_mem(s.dst_md, s.engine, acc.data());
  s.matmul.execute(
      s.stream, {{DNNL_ARG_SRC, src_mem}, {DNNL_ARG_WEIGHTS, s.weights}, {DNNL_ARG_DST, dst_mem}});
  s.stream.wait();
}

std::string OneDnnInt8Matmul::implementation() const { return state_->pd.impl_info_str(); }

bool OneDnnInt8Matmul::at_best() const {
  const std::string impl = implementation();
  if (impl.find("ref") != std::string::npos) return false;
  const bool vnni = cpu_isa() >= Isa::kAvx512 && __builtin_cpu_supports("avx512vnni");
  return !vnni || impl.find("vnni") != std::string::npos || impl.find("amx") != std::string::npos ||
         impl.find("bf16") != std::string::npos;
}

std::string onednn_description() {
  const dnnl_version_t* v = dnnl_version();
  std::ostringstream out;
  out << "oneDNN " << v->major << '.' << v->minor << '.' << v->patch << " ("
      << (v->cpu_runtime == DNNL_RUNTIME_OMP ? "OpenMP" : "non-OpenMP") << " runtime), ISA ";
  switch (dnnl::get_effective_cpu_isa()) {
    case dnnl::cpu_isa::avx512_core_amx:
      out << "AVX-512 with AMX";
      break;
    case dnnl::cpu_isa::avx512_core_bf16:
      out << "AVX-512 with VNNI and BF16";
      break;
    case dnnl::cpu_isa::avx512_core_vnni:
      out << "AVX-512 with VNNI";
      break;
    case dnnl::cpu_isa::avx512_core:
      out << "AVX-512 (no VNNI)";
      break;
    case dnnl::cpu_isa::avx2_vnni:
      out << "AVX2 with VNNI";
      break;
    case dnnl::cpu_isa::avx2:
      out << "AVX2";
      break;
    default:
      out << "older than AVX2";
  }
  if (const char* cap = std::getenv("DNNL_MAX_CPU_ISA"))
    out << " (capped by DNNL_MAX_CPU_ISA=" << cap << ")";
  else
    out << " (the best it detects on this CPU)";
  return out.str();
}

void set_onednn_threads(int threads) {
  BOOK_CHECK(threads >= 1, "onednn peer: " << threads << " threads; use 1 or more");
  omp_set_num_threads(threads);
}

}  // namespace book::quant
