// The schemes, the checks and the general quantiser that both tracks share; the exercises'
// reference bodies are in solutions/14_quantization/quant.cc.
#include "chapters/14_quantization/quant.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "common/check.h"
#include "common/rng.h"

namespace book::quant {

std::string Scheme::name() const {
  std::ostringstream out;
  out << (bits == Bits::kInt8 ? "int8" : "int4") << ' ';
  switch (granularity) {
    case Granularity::kPerTensor:
      out << "per-tensor";
      break;
    case Granularity::kPerChannel:
      out << "per-channel";
      break;
    case Granularity::kGroup:
      out << 'g' << group_size;
      break;
  }
  if (symmetry == Symmetry::kAsymmetric) out << " asym";
  return out.str();
}

int qmax(const Scheme& scheme) {
  const int b = static_cast<int>(scheme.bits);
  return scheme.symmetry == Symmetry::kSymmetric ? (1 << (b - 1)) - 1 : (1 << b) - 1;
}

int qmin(const Scheme& scheme) {
  return scheme.symmetry == Symmetry::kSymmetric ? -qmax(scheme) : 0;
}

void check_scheme(const Scheme& scheme, int rows, int cols) {
  BOOK_CHECK(scheme.bits == Bits::kInt8 || scheme.bits == Bits::kInt4,
             "quant: " << static_cast<int>(scheme.bits) << " bits; the book quantises to 8 or 4");
  BOOK_CHECK(scheme.symmetry == Symmetry::kSymmetric || scheme.symmetry == Symmetry::kAsymmetric,
             "quant: symmetry " << static_cast<int>(scheme.symmetry)
                                << " is neither symmetric nor asymmetric");
  BOOK_CHECK(scheme.granularity == Granularity::kPerTensor ||
                 scheme.granularity == Granularity::kPerChannel ||
                 scheme.granularity == Granularity::kGroup,
             "quant: granularity " << static_cast<int>(scheme.granularity)
                                   << " is not per-tensor, per-channel or group");
  BOOK_CHECK(rows >= 1 && cols >= 1,
             "quant: a " << rows << " × " << cols << " matrix; both sizes must be >= 1");
  if (scheme.granularity == Granularity::kGroup)
    BOOK_CHECK(scheme.group_size >= 1 && cols % scheme.group_size == 0,
               "quant: group size " << scheme.group_size << " does not divide a row of " << cols
                                    << " inputs; pick a divisor of " << cols
                                    << " (a group never spans two rows)");
  if (scheme.bits == Bits::kInt4)
    BOOK_CHECK(cols % 2 == 0, "quant: INT4 packs two values a byte, so a row needs an even "
                              "number of values; this one has "
                                  << cols);
}

void check_finite(std::span<const float> values, const char* what) {
  for (std::size_t i = 0; i < values.size(); ++i)
    BOOK_CHECK(std::isfinite(values[i]), "quant: " << what << "[" << i << "] is " << values[i]
                                                   << "; quantisation needs finite values (a "
                                                      "NaN or infinity would poison its scale)");
}

int QuantizedMatrix::group_cols() const {
  return scheme.granularity == Granularity::kGroup ? scheme.group_size : cols;
}

int QuantizedMatrix::groups_per_row() const {
  return scheme.granularity == Granularity::kPerTensor ? 0 : cols / group_cols();
}

namespace {

std::size_t scale_index(const QuantizedMatrix& w, int row, int col) {
  if (w.scheme.granularity == Granularity::kPerTensor) return 0;
  return static_cast<std::size_t>(row) * w.groups_per_row() + col / w.group_cols();
}

std::size_t scale_count(const Scheme& scheme, int rows, int cols) {
  switch (scheme.granularity) {
    case Granularity::kPerTensor:
      return 1;
    case Granularity::kPerChannel:
      return rows;
    case Granularity::kGroup:
      break;
  }
  return static_cast<std::size_t>(rows) * (cols / scheme.group_size);
}

std::size_t data_bytes(const Scheme& scheme, int rows, int cols) {
  const std::size_t n = static_cast<std::size_t>(rows) * cols;
  return scheme.bits == Bits::kInt8 ? n : n / 2;
}

}  // namespace

int QuantizedMatrix::q(int row, int col) const {
  const std::size_t i = static_cast<std::size_t>(row) * cols + col;
  const bool symmetric = scheme.symmetry == Symmetry::kSymmetric;
  if (scheme.bits == Bits::kInt8)
    return symmetric ? static_cast<int>(static_cast<std::int8_t>(data[i])) : data[i];
  const int nibble = (i % 2 == 0) ? (data[i / 2] & 0x0f) : (data[i / 2] >> 4);
  return symmetric ? nibble - 8 : nibble;
}

float QuantizedMatrix::scale(int row, int col) const { return scales[scale_index(*this, row, col)]; }

int QuantizedMatrix::zero(int row, int col) const {
  return zeros.empty() ? 0 : zeros[scale_index(*this, row, col)];
}

float QuantizedMatrix::value(int row, int col) const {
  return scale(row, col) * static_cast<float>(q(row, col) - zero(row, col));
}

std::size_t QuantizedMatrix::bytes() const {
  return data.size() + scales.size() * sizeof(float) + zeros.size();
}

double QuantizedMatrix::bits_per_weight() const {
  return 8.0 * static_cast<double>(bytes()) / (static_cast<double>(rows) * cols);
}

void check_matrix(const QuantizedMatrix& w) {
  check_scheme(w.scheme, w.rows, w.cols);
  const std::size_t want_data = data_bytes(w.scheme, w.rows, w.cols);
  const std::size_t want_scales = scale_count(w.scheme, w.rows, w.cols);
  const std::size_t want_zeros = w.scheme.symmetry == Symmetry::kAsymmetric ? want_scales : 0;
  BOOK_CHECK(w.data.size() == want_data && w.scales.size() == want_scales &&
                 w.zeros.size() == want_zeros,
             "quant: a " << w.rows << " × " << w.cols << " " << w.scheme.name() << " matrix needs "
                         << want_data << " bytes of integers, " << want_scales << " scales and "
                         << want_zeros << " zero points; this one has " << w.data.size() << ", "
                         << w.scales.size() << " and " << w.zeros.size());
  for (std::size_t i = 0; i < w.scales.size(); ++i)
    BOOK_CHECK(std::isfinite(w.scales[i]) && w.scales[i] > 0,
               "quant: scale " << i << " is " << w.scales[i]
                               << "; a scale must be finite and > 0 (a zero scale loses its "
                                  "group)");
  const int top = (1 << static_cast<int>(w.scheme.bits)) - 1;
  for (std::size_t i = 0; i < w.zeros.size(); ++i)
    BOOK_CHECK(w.zeros[i] <= top, "quant: zero point " << i << " is " << int{w.zeros[i]}
                                                       << ", outside [0, " << top << "]");
}

void check_gemv_call(const char* who, int rows, int cols, std::span<const float> x, int m,
                     std::span<const float> y) {
  BOOK_CHECK(m >= 1, who << ": m = " << m << "; give at least one row of x");
  BOOK_CHECK(x.size() == static_cast<std::size_t>(m) * cols &&
                 y.size() == static_cast<std::size_t>(m) * rows,
             who << ": a " << rows << " × " << cols << " matrix at m = " << m << " needs x of "
                 << static_cast<std::size_t>(m) * cols << " and y of "
                 << static_cast<std::size_t>(m) * rows << " floats, got " << x.size() << " and "
                 << y.size());
}

QuantizedMatrix random_quantized_matrix(const Scheme& scheme, int rows, int cols, Rng& rng) {
  check_scheme(scheme, rows, cols);
  QuantizedMatrix w{scheme, rows, cols, {}, {}, {}};
  const bool symmetric = scheme.symmetry == Symmetry::kSymmetric;
  w.data.resize(data_bytes(scheme, rows, cols));
  // Eight random bytes a draw (a benchmark's matrix has hundreds of millions), then the few codes
  // outside a symmetric range moved in: −128 for INT8, a nibble 0 (q = −8) for INT4.
  for (std::size_t i = 0; i < w.data.size(); i += 8) {
    std::uint64_t bits = rng.next_u64();
    for (std::size_t j = i; j < std::min(i + 8, w.data.size()); ++j, bits >>= 8) {
      std::uint8_t b = static_cast<std::uint8_t>(bits);
      if (symmetric && scheme.bits == Bits::kInt8 && b == 0x80) b = 0x81;
      if (symmetric && scheme.bits == Bits::kInt4) {
        if ((b & 0x0f) == 0) b |= 0x01;
        if ((b & 0xf0) == 0) b |= 0x10;
      }
      w.data[j] = b;
    }
  }
  for (std::size_t i = 0; i < scale_count(scheme, rows, cols); ++i) {
    w.scales.push_back(static_cast<float>(rng.uniform(0.005, 0.05)));
    if (!symmetric) w.zeros.push_back(static_cast<std::uint8_t>(rng.uniform_int(0, qmax(scheme))));
  }
  return w;
}

QuantizedMatrix quantize(std::span<const float> w, int rows, int cols, const Scheme& scheme) {
  check_scheme(scheme, rows, cols);
  BOOK_CHECK(w.size() == static_cast<std::size_t>(rows) * cols,
             "quantize: a " << rows << " × " << cols << " matrix needs "
                            << static_cast<std::size_t>(rows) * cols << " values, got "
                            << w.size());
  check_finite(w, "weights");
  if (scheme.bits == Bits::kInt8 && scheme.symmetry == Symmetry::kSymmetric &&
      scheme.granularity == Granularity::kPerChannel)
    return quantize_per_channel_int8(w, rows, cols);

  QuantizedMatrix out;
  out.scheme = scheme;
  out.rows = rows;
  out.cols = cols;
  const bool symmetric = scheme.symmetry == Symmetry::kSymmetric;
  const int lo = qmin(scheme), hi = qmax(scheme);
  const std::size_t n = static_cast<std::size_t>(rows) * cols;
  // The integers unpacked first (INT4 packs them at the end); an offset makes them unsigned.
  std::vector<std::uint8_t> codes(n);
  const int offset = (scheme.bits == Bits::kInt4 && symmetric) ? 8 : 0;
  const int gc = out.group_cols();
  // Each (first row, last row, first col) run of values sharing one scale.
  const auto quantize_run = [&](int r0, int r1, int c0) {
    float lo_value = 0, hi_value = 0;  // the range, widened to include 0
    for (int r = r0; r < r1; ++r)
      for (int c = c0; c < c0 + gc; ++c) {
        const float x = w[static_cast<std::size_t>(r) * cols + c];
        lo_value = std::min(lo_value, x);
        hi_value = std::max(hi_value, x);
      }
    float s = symmetric ? std::max(-lo_value, hi_value) / static_cast<float>(hi)
                        : (hi_value - lo_value) / static_cast<float>(hi);
    if (!(s > 0)) s = 1;  // an all-zero run
    const int z = symmetric ? 0 : static_cast<int>(std::lround(-lo_value / s));
    out.scales.push_back(s);
    if (!symmetric) out.zeros.push_back(static_cast<std::uint8_t>(z));
    for (int r = r0; r < r1; ++r)
      for (int c = c0; c < c0 + gc; ++c) {
        const std::size_t i = static_cast<std::size_t>(r) * cols + c;
        const long q = std::clamp(std::lround(w[i] / s) + z, static_cast<long>(lo),
                                  static_cast<long>(hi));
        codes[i] = static_cast<std::uint8_t>(q + offset);
      }
  };
  if (scheme.granularity == Granularity::kPerTensor)
    quantize_run(0, rows, 0);
  else
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; c += gc) quantize_run(r, r + 1, c);
  out.data = scheme.bits == Bits::kInt4 ? pack_int4(codes) : std::move(codes);
  return out;
}

void dequantize(const QuantizedMatrix& w, std::span<float> out) {
  check_matrix(w);
  BOOK_CHECK(out.size() == static_cast<std::size_t>(w.rows) * w.cols,
             "dequantize: a " << w.rows << " × " << w.cols << " matrix needs "
                              << static_cast<std::size_t>(w.rows) * w.cols
                              << " floats of output, got " << out.size());
  for (int r = 0; r < w.rows; ++r)
    for (int c = 0; c < w.cols; ++c) out[static_cast<std::size_t>(r) * w.cols + c] = w.value(r, c);
}

}  // namespace book::quant
