// The weight-only GEMV's preparation, checks, threads and plain path (gemv.h); the SIMD paths are
// gemv_avx2.cc and gemv_avx512.cc, all three reading the view of gemv_kernels.h.
#include "chapters/14_quantization/gemv.h"

#include <algorithm>
#include <thread>

#include "chapters/10_paged_attention/thread_team.h"
#include "chapters/14_quantization/gemv_kernels.h"
#include "common/check.h"
#include "common/cpu.h"

namespace book::quant {

using detail::Format;
using detail::GemvCall;
using detail::GemvView;

std::string gemv_path_name(GemvPath path) {
  switch (path) {
    case GemvPath::kAuto:
      return "auto";
    case GemvPath::kPlain:
      return "plain";
    case GemvPath::kAvx2:
      return "avx2";
    case GemvPath::kAvx512:
      return "avx512";
  }
  return "unknown";
}

GemvPath best_gemv_path() {
  return cpu_isa() >= Isa::kAvx512 ? GemvPath::kAvx512 : GemvPath::kAvx2;
}

bool gemv_path_available(GemvPath path) {
  switch (path) {
    case GemvPath::kAuto:
    case GemvPath::kPlain:
      return true;
    case GemvPath::kAvx2:
      return cpu_isa() >= Isa::kAvx2;
    case GemvPath::kAvx512:
      return cpu_isa() >= Isa::kAvx512;
  }
  return false;
}

int gemv_threads(int threads) {
  BOOK_CHECK(threads >= 0, "gemv: " << threads
                                    << " threads; give a count >= 1, or 0 for every hardware "
                                       "thread");
  if (threads > 0) return threads;
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

namespace detail {
namespace {

// The value at (row, col) before its offset and scale, read from the prepared layout.
float stored(const GemvView& v, int row, int col) {
  const long at = static_cast<long>(row) * row_bytes(v);
  switch (v.format) {
    case Format::kFp32:
      return v.fp32[static_cast<long>(row) * v.stride + col];
    case Format::kInt8Signed:
      return static_cast<float>(static_cast<std::int8_t>(v.data[at + col]));
    case Format::kInt8Unsigned:
      return static_cast<float>(v.data[at + col]);
    case Format::kInt4Blocked: {
      const std::uint8_t byte = v.data[at + col / kGemvBlock * 16 + col % 16];
      return static_cast<float>(col % kGemvBlock < 16 ? byte & 0x0f : byte >> 4);
    }
  }
  return 0;
}

}  // namespace

void gemv_rows_plain(const GemvView& v, const GemvCall& c, int r0, int r1) {
  const int group_cols = v.group_cols;
  for (int r = r0; r < r1; ++r)
    for (int t = 0; t < c.m; ++t) {
      const float* x = c.x + static_cast<long>(t) * c.x_stride;
      float sum = 0;
      for (int g = 0; g < v.groups; ++g) {
        float part = 0;  // Σ stored·x over the group, then the scale and the offset once
        for (int col = g * group_cols; col < std::min((g + 1) * group_cols, v.cols); ++col)
          part += stored(v, r, col) * x[col];
        const long at = static_cast<long>(r) * v.scale_stride + g;
        const float s = v.scales ? v.scales[at] : 1.0f;
        const float offset = v.zeros ? static_cast<float>(v.zeros[at]) : v.offset;
        sum += s * part;
        if (c.x_sums) sum -= s * offset * c.x_sums[static_cast<long>(t) * v.groups + g];
      }
      c.y[static_cast<long>(t) * v.rows + r] = sum;
    }
}

GemvPath resolve(GemvPath path, const char* who) {
  BOOK_CHECK(gemv_path_available(path), who << ": the " << gemv_path_name(path)
                                            << " path needs an instruction set this CPU ("
                                            << cpu_model() << ", " << isa_name(cpu_isa())
                                            << ") lacks; use GemvPath::kAuto or a path it has");
  return path == GemvPath::kAuto ? best_gemv_path() : path;
}

// Splits rows over the team in runs of 4 (the SIMD paths' row tile) and runs the path.
void run_rows(kv::ThreadTeam& team, GemvPath path, const GemvView& v, const GemvCall& c) {
  const auto kernel = path == GemvPath::kAvx512 ? detail::gemv_rows_avx512
                      : path == GemvPath::kAvx2 ? detail::gemv_rows_avx2
                                                : detail::gemv_rows_plain;
  const int quads = (v.rows + 3) / 4, members = team.size();
  team.run([&](int member) {
    const int q0 = static_cast<int>(static_cast<long>(quads) * member / members);
    const int q1 = static_cast<int>(static_cast<long>(quads) * (member + 1) / members);
    const int r0 = std::min(v.rows, 4 * q0), r1 = std::min(v.rows, 4 * q1);
    if (r0 < r1) kernel(v, c, r0, r1);
  });
}

}  // namespace detail

Fp32Gemv::Fp32Gemv(std::span<const float> w, int rows, int cols, GemvPath path, int threads)
    : w_(w), rows_(rows), cols_(cols) {
  BOOK_CHECK(rows >= 1 && cols >= 1,
             "Fp32Gemv: a " << rows << " × " << cols << " matrix; both sizes must be >= 1");
  BOOK_CHECK(w.size() == static_cast<std::size_t>(rows) * cols,
             "Fp32Gemv: a " << rows << " × " << cols << " matrix needs "
                            << static_cast<std::size_t>(rows) * cols << " floats, got "
                            << w.size());
  path_ = detail::resolve(path, "Fp32Gemv");
  team_ = std::make_unique<kv::ThreadTeam>(gemv_threads(threads));
}

Fp32Gemv::~Fp32Gemv() = default;
Fp32Gemv::Fp32Gemv(Fp32Gemv&&) noexcept = default;
Fp32Gemv& Fp32Gemv::operator=(Fp32Gemv&&) noexcept = default;
int Fp32Gemv::threads() const { return team_->size(); }
void Fp32Gemv::set_threads(int threads) {
  team_ = std::make_unique<kv::ThreadTeam>(gemv_threads(threads));
}

std::size_t Fp32Gemv::bytes_read(int m) const {
  return (static_cast<std::size_t>(rows_) + m) * cols_ * sizeof(float);
}

void Fp32Gemv::run(std::span<const float> x, int m, std::span<float> y) {
  check_gemv_call("Fp32Gemv::run", rows_, cols_, x, m, y);
  GemvView v;
  v.format = Format::kFp32;
  v.fp32 = w_.data();
  v.rows = rows_;
  v.cols = v.stride = v.group_cols = cols_;
  v.blocks_per_group = cols_ / kGemvBlock;
  detail::run_rows(*team_, path_, v, {x.data(), cols_, nullptr, m, y.data()});
}

}  // namespace book::quant
