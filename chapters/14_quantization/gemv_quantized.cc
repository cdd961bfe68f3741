// QuantizedGemv (gemv.h): the weights re-laid once for the kernels, and each call's x padded and
// summed per group.
#include <sys/mman.h>

#include <algorithm>

#include "chapters/10_paged_attention/thread_team.h"
#include "chapters/14_quantization/gemv.h"
#include "chapters/14_quantization/gemv_kernels.h"
#include "common/check.h"

namespace book::quant {

using detail::Format;

QuantizedGemv::QuantizedGemv(const QuantizedMatrix& w, GemvPath path, int threads)
    : scheme_(w.scheme), rows_(w.rows), cols_(w.cols) {
  check_matrix(w);
  const bool grouped = w.scheme.granularity == Granularity::kGroup;
  const bool blocks_fit = !grouped || w.scheme.group_size % kGemvBlock == 0;
  if (path == GemvPath::kAuto && !blocks_fit) path = GemvPath::kPlain;
  BOOK_CHECK(blocks_fit || path == GemvPath::kPlain,
             "QuantizedGemv: the " << gemv_path_name(path) << " path reads groups in blocks of "
                                   << kGemvBlock << " values, and " << w.scheme.name()
                                   << " has groups of " << w.scheme.group_size
                                   << "; use a group size that is a multiple of " << kGemvBlock
                                   << ", or GemvPath::kAuto (which runs the plain path)");
  path_ = detail::resolve(path, "QuantizedGemv");
  team_ = std::make_unique<kv::ThreadTeam>(gemv_threads(threads));

  // Rows padded with zeros to whole blocks; INT4 re-packed so that byte j of a block holds
  // values j and j + 16.
  stride_ = (cols_ + kGemvBlock - 1) / kGemvBlock * kGemvBlock;
  const bool int4 = w.scheme.bits == Bits::kInt4;
  const long row_bytes = int4 ? stride_ / 2 : stride_;
  const std::size_t bytes = static_cast<std::size_t>(rows_) * row_bytes;
  data_ = decltype(data_)(bytes);
  // Advice before the first touch; where it is refused the matrix stays on small pages.
  madvise(data_.data(), (bytes + (std::size_t{2} << 20) - 1) >> 21 << 21, MADV_HUGEPAGE);
  std::fill_n(data_.data(), bytes, std::uint8_t{0});
  for (int r = 0; r < rows_; ++r) {
    std::uint8_t* out = data_.data() + r * row_bytes;
    const std::uint8_t* in = w.data.data() + static_cast<long>(r) * (int4 ? cols_ / 2 : cols_);
    if (!int4) {
      std::copy_n(in, cols_, out);
      continue;
    }
    for (int c = 0; c < cols_; ++c) {
      const std::uint8_t nibble = c % 2 == 0 ? in[c / 2] & 0x0f : in[c / 2] >> 4;
      const int j = c % kGemvBlock;
      out[c / kGemvBlock * 16 + j % 16] |= static_cast<std::uint8_t>(j < 16 ? nibble : nibble << 4);
    }
  }
  scales_ = w.scales;
  zeros_ = w.zeros;
}

QuantizedGemv::~QuantizedGemv() = default;
QuantizedGemv::QuantizedGemv(QuantizedGemv&&) noexcept = default;
QuantizedGemv& QuantizedGemv::operator=(QuantizedGemv&&) noexcept = default;
int QuantizedGemv::threads() const { return team_->size(); }
void QuantizedGemv::set_threads(int threads) {
  team_ = std::make_unique<kv::ThreadTeam>(gemv_threads(threads));
}

std::size_t QuantizedGemv::bytes_read(int m) const {
  return data_.size() + scales_.size() * sizeof(float) + zeros_.size() +
         static_cast<std::size_t>(m) * cols_ * sizeof(float);
}

void QuantizedGemv::run(std::span<const float> x, int m, std::span<float> y) {
  check_gemv_call("QuantizedGemv::run", rows_, cols_, x, m, y);
  detail::GemvView v;
  const bool int4 = scheme_.bits == Bits::kInt4;
  const bool symmetric = scheme_.symmetry == Symmetry::kSymmetric;
  v.format = int4 ? Format::kInt4Blocked : symmetric ? Format::kInt8Signed : Format::kInt8Unsigned;
  v.data = data_.data();
  v.rows = rows_;
  v.cols = cols_;
  v.stride = stride_;
  const bool grouped = scheme_.granularity == Granularity::kGroup;
  v.group_cols = grouped ? scheme_.group_size : stride_;
  v.groups = grouped ? cols_ / scheme_.group_size : 1;
  v.blocks_per_group = v.group_cols / kGemvBlock;
  v.scales = scales_.data();
  v.scale_stride = scheme_.granularity == Granularity::kPerTensor ? 0 : v.groups;
  v.zeros = symmetric ? nullptr : zeros_.data();
  v.offset = symmetric && int4 ? 8.0f : 0.0f;

  const float* xs = x.data();
  if (stride_ != cols_) {  // zeros after each row's last input, to match the padded weights
    x_padded_.assign(static_cast<std::size_t>(m) * stride_, 0.0f);
    for (int t = 0; t < m; ++t)
      std::copy_n(x.data() + static_cast<long>(t) * cols_, cols_,
                  x_padded_.data() + static_cast<long>(t) * stride_);
    xs = x_padded_.data();
  }
  const float* sums = nullptr;
  if (v.zeros || v.offset != 0) {  // Σ x per group, for the offsets (gemv.h)
    const int group_cols = grouped ? scheme_.group_size : cols_;
    x_sums_.assign(static_cast<std::size_t>(m) * v.groups, 0.0f);
    for (int t = 0; t < m; ++t)
      for (int g = 0; g < v.groups; ++g) {
        float s = 0;
        for (int c = g * group_cols; c < (g + 1) * group_cols; ++c)
          s += x[static_cast<long>(t) * cols_ + c];
        x_sums_[static_cast<long>(t) * v.groups + g] = s;
      }
    sums = x_sums_.data();
  }
  detail::run_rows(*team_, path_, v, {xs, stride_, sums, m, y.data()});
}

}  // namespace book::quant
