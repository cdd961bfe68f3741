// W8A8: the activation quantiser, the weights' packing, the reference sums, and the drivers that
// split output-channel blocks over threads and apply the scales (w8a8.h).
#include "chapters/14_quantization/w8a8.h"

#include <algorithm>
#include <cmath>

#include "chapters/01_gemm_cpu/sgemm.h"
#include "chapters/14_quantization/w8a8_kernels.h"
#include "common/check.h"
#include "common/cpu.h"

namespace book::quant {

std::string w8a8_kernel_name(W8A8Kernel kernel) {
  switch (kernel) {
    case W8A8Kernel::kReference:
      return "reference";
    case W8A8Kernel::kAvx2:
      return "avx2";
    case W8A8Kernel::kAvx512Vnni:
      return "avx512-vnni";
  }
  return "unknown";
}

bool w8a8_kernel_available(W8A8Kernel kernel) {
  switch (kernel) {
    case W8A8Kernel::kReference:
      return true;
    case W8A8Kernel::kAvx2:
      return cpu_isa() >= Isa::kAvx2;
    case W8A8Kernel::kAvx512Vnni:
      // cpu_isa() covers F, BW, VL, DQ and the OS saving the registers; VNNI is asked on top.
      return cpu_isa() >= Isa::kAvx512 && __builtin_cpu_supports("avx512vnni");
  }
  return false;
}

W8A8Kernel best_w8a8_kernel() {
  for (const W8A8Kernel k : {W8A8Kernel::kAvx512Vnni, W8A8Kernel::kAvx2})
    if (w8a8_kernel_available(k)) return k;
  return W8A8Kernel::kReference;
}

void quantize_activations(std::span<const float> x, int tokens, int cols, W8A8Activations& out) {
  BOOK_CHECK(tokens >= 1 && cols >= 1 && cols <= kW8A8MaxCols,
             "w8a8: activations of " << tokens << " tokens × " << cols
                                     << " features; tokens must be >= 1 and features in [1, "
                                     << kW8A8MaxCols << "] (the int32 sums' exact range)");
  const std::size_t n = static_cast<std::size_t>(tokens) * cols;
  BOOK_CHECK(x.size() == n, "w8a8: " << tokens << " tokens × " << cols << " features need " << n
                                     << " activations, got " << x.size());
  check_finite(x, "activations");
  out.tokens = tokens;
  out.cols = cols;
  out.q.resize(n);
  out.scales.resize(tokens);
  const bool avx2 = cpu_isa() >= Isa::kAvx2;
  for (int t = 0; t < tokens; ++t) {
    const float* row = x.data() + static_cast<std::size_t>(t) * cols;
    std::int8_t* q = out.q.data() + static_cast<std::size_t>(t) * cols;
    float absmax = 0;
    if (avx2) {
      absmax = detail::absmax_avx2(row, cols);
    } else {
      for (int k = 0; k < cols; ++k) absmax = std::max(absmax, std::abs(row[k]));
    }
    const float s = absmax > 0 ? absmax / 127.0f : 1.0f;
    out.scales[t] = s;
    // Dividing (not multiplying by 1 / s, which can round a value to 128 at the edge) keeps
    // |x / s| <= 127 as quant.h's weights do; the AVX2 row rounds exactly like std::lround.
    if (avx2) {
      detail::quantize_row_avx2(row, cols, s, q);
    } else {
      for (int k = 0; k < cols; ++k) q[k] = static_cast<std::int8_t>(std::lround(row[k] / s));
    }
  }
}

W8A8Weights::W8A8Weights(const QuantizedMatrix& w, W8A8Kernel kernel)
    : rows_(w.rows), cols_(w.cols), kernel_(kernel) {
  check_matrix(w);
  BOOK_CHECK(w.scheme.bits == Bits::kInt8 && w.scheme.symmetry == Symmetry::kSymmetric &&
                 w.scheme.granularity == Granularity::kPerChannel,
             "w8a8: takes symmetric INT8 weights with one scale per output channel, got "
                 << w.scheme.name() << "; quantise with Scheme{} (quant.h)");
  BOOK_CHECK(w.cols <= kW8A8MaxCols, "w8a8: " << w.cols << " input features; at most "
                                              << kW8A8MaxCols << " keep the int32 sums exact");
  BOOK_CHECK(w8a8_kernel_available(kernel), "w8a8: this CPU does not run the "
                                                << w8a8_kernel_name(kernel) << " kernel; use "
                                                << w8a8_kernel_name(best_w8a8_kernel()));
  scales_ = w.scales;
  plain_.assign(reinterpret_cast<const std::int8_t*>(w.data.data()),
                reinterpret_cast<const std::int8_t*>(w.data.data()) + w.data.size());
  if (kernel == W8A8Kernel::kAvx512Vnni) {
    packed_ = detail::pack_vnni(plain_, rows_, cols_);
    correction_.assign(detail::round_up(rows_, detail::kVnniBlockN), 0);
    for (int n = 0; n < rows_; ++n) {
      std::int32_t sum = 0;
      for (int k = 0; k < cols_; ++k) sum += plain_[static_cast<std::size_t>(n) * cols_ + k];
      correction_[n] = 128 * sum;
    }
  } else if (kernel == W8A8Kernel::kAvx2) {
    packed_ = detail::pack_avx2(plain_, rows_, cols_);
  }
}

namespace {

void check_shapes(const W8A8Activations& x, const W8A8Weights& w, std::size_t out_size,
                  const char* what) {
  BOOK_CHECK(x.tokens >= 1 && x.cols >= 1 &&
                 x.q.size() == static_cast<std::size_t>(x.tokens) * x.cols &&
                 x.scales.size() == static_cast<std::size_t>(x.tokens),
             "w8a8: activations of " << x.tokens << " × " << x.cols << " hold " << x.q.size()
                                     << " integers and " << x.scales.size()
                                     << " scales; make them with quantize_activations");
  BOOK_CHECK(x.cols == w.cols(), "w8a8: activations have " << x.cols << " features, the weights "
                                                           << w.cols() << " input features");
  const std::size_t want = static_cast<std::size_t>(x.tokens) * w.rows();
  BOOK_CHECK(out_size == want, "w8a8: " << x.tokens << " tokens × " << w.rows() << " outputs need "
                                        << want << " " << what << ", got " << out_size);
}

// The activations staged once per call for the weights' kernel (each calling thread its own).
struct Staged {
  std::vector<std::uint8_t> vnni;
  std::vector<std::int16_t> avx2;
};

// Runs every output-channel block, split over threads; after a block's sums are in c (acc, or
// the thread's own scratch when `done` converts them), calls done(block, c, ldc).
template <typename Done>
void run_blocks(const W8A8Activations& x, const W8A8Weights& w, std::int32_t* acc, int threads,
                const Done& done) {
  thread_local Staged staged;
  const int block_n =
      w.kernel() == W8A8Kernel::kAvx512Vnni ? detail::kVnniBlockN : detail::kAvx2BlockN;
  if (w.kernel() == W8A8Kernel::kAvx512Vnni) detail::stage_vnni(x.q, x.tokens, x.cols, staged.vnni);
  if (w.kernel() == W8A8Kernel::kAvx2) detail::stage_avx2(x.q, x.tokens, x.cols, staged.avx2);
  const int blocks = (w.rows() + block_n - 1) / block_n;
  if (threads <= 0) threads = gemm::sgemm_thread_count();
  threads = std::max(1, std::min(threads, blocks));
  const Staged& s = staged;
  gemm::run_on_gemm_threads(threads, [&](int thread) {
    thread_local std::vector<std::int32_t> scratch;
    if (!acc) scratch.resize(static_cast<std::size_t>(x.tokens) * block_n);
    for (int b = blocks * thread / threads; b < blocks * (thread + 1) / threads; ++b) {
      std::int32_t* c = acc ? acc + static_cast<std::size_t>(b) * block_n : scratch.data();
      const int ldc = acc ? w.rows() : block_n;
      if (w.kernel() == W8A8Kernel::kAvx512Vnni)
        detail::vnni_block(s.vnni.data(), detail::vnni_stride(x.cols), x.tokens,
                           detail::round_up(x.cols, 4), w.packed().data(), w.correction().data(),
                           w.rows(), b, c, ldc);
      else
        detail::avx2_block(s.avx2.data(), detail::avx2_stride(x.cols), x.tokens,
                           detail::round_up(x.cols, 2), w.packed().data(), w.rows(), b, c, ldc);
      done(b * block_n, std::min(block_n, w.rows() - b * block_n), c, ldc);
    }
  });
}

}  // namespace

void w8a8_accumulate_reference(const W8A8Activations& x, const W8A8Weights& w,
                               std::span<std::int32_t> acc) {
  check_shapes(x, w, acc.size(), "sums");
  const std::span<const std::int8_t> wq = w.plain();
  for (int t = 0; t < x.tokens; ++t)
    for (int n = 0; n < w.rows(); ++n) {
      std::int32_t sum = 0;
      for (int k = 0; k < x.cols; ++k)
        sum += std::int32_t{x.q[static_cast<std::size_t>(t) * x.cols + k]} *
               wq[static_cast<std::size_t>(n) * x.cols + k];
      acc[static_cast<std::size_t>(t) * w.rows() + n] = sum;
    }
}

void w8a8_accumulate(const W8A8Activations& x, const W8A8Weights& w, std::span<std::int32_t> acc,
                     int threads) {
  BOOK_CHECK(threads >= 0, "w8a8: " << threads << " threads; use 0 (all) or a positive count");
  if (w.kernel() == W8A8Kernel::kReference) return w8a8_accumulate_reference(x, w, acc);
  check_shapes(x, w, acc.size(), "sums");
  run_blocks(x, w, acc.data(), threads, [](int, int, const std::int32_t*, int) {});
}

void w8a8_gemm(const W8A8Activations& x, const W8A8Weights& w, std::span<const float> bias,
               std::span<float> y, int threads) {
  BOOK_CHECK(threads >= 0, "w8a8: " << threads << " threads; use 0 (all) or a positive count");
  check_shapes(x, w, y.size(), "outputs");
  BOOK_CHECK(bias.empty() || bias.size() == static_cast<std::size_t>(w.rows()),
             "w8a8: a bias needs " << w.rows() << " values (one per output), got " << bias.size());
  check_finite(bias, "bias");
  const int n = w.rows();
  const std::span<const float> sw = w.scales();
  // Scales: (s_x · s_w) · float(acc), then + bias, in float (w8a8.h states the bound).
  const auto epilogue = [&](int n0, int count, const std::int32_t* c, int ldc) {
    for (int t = 0; t < x.tokens; ++t) {
      float* __restrict out = y.data() + static_cast<std::size_t>(t) * n + n0;
      const std::int32_t* __restrict sums = c + static_cast<std::size_t>(t) * ldc;
      const float* __restrict scales = sw.data() + n0;
      const float st = x.scales[t];
      if (bias.empty()) {
        for (int j = 0; j < count; ++j) out[j] = st * scales[j] * static_cast<float>(sums[j]);
      } else {
        const float* __restrict b = bias.data() + n0;
        for (int j = 0; j < count; ++j)
          out[j] = st * scales[j] * static_cast<float>(sums[j]) + b[j];
      }
    }
  };
  if (w.kernel() == W8A8Kernel::kReference) {
    std::vector<std::int32_t> acc(static_cast<std::size_t>(x.tokens) * n);
    w8a8_accumulate_reference(x, w, acc);
    epilogue(0, n, acc.data(), n);
    return;
  }
  run_blocks(x, w, nullptr, threads, epilogue);
}

void w8a8_linear(std::span<const float> x, int tokens, const W8A8Weights& w,
                 std::span<const float> bias, std::span<float> y, W8A8Activations& scratch,
                 int threads) {
  BOOK_CHECK(tokens >= 1 && tokens <= static_cast<int>(x.size()) && x.size() % tokens == 0 &&
                 static_cast<int>(x.size() / tokens) == w.cols(),
             "w8a8: " << x.size() << " activations are not " << tokens << " tokens × " << w.cols()
                      << " features");
  quantize_activations(x, tokens, w.cols(), scratch);
  w8a8_gemm(scratch, w, bias, y, threads);
}

}  // namespace book::quant
