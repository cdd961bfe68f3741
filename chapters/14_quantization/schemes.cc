#include "chapters/14_quantization/schemes.h"

#include <algorithm>
#include <cmath>

namespace book::quant {

SchemeError measure_scheme(std::span<const float> w, int rows, int cols, const Scheme& scheme) {
  const QuantizedMatrix q = quantize(w, rows, cols, scheme);
  std::vector<float> back(w.size());
  dequantize(q, back);
  SchemeError row{scheme.name(), q.bits_per_weight(), q.bytes()};
  double signal = 0, noise = 0;
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      const std::size_t i = static_cast<std::size_t>(r) * cols + c;
      const double error = std::abs(static_cast<double>(w[i]) - back[i]);
      row.max_abs_error = std::max(row.max_abs_error, error);
      row.worst_vs_bound = std::max(row.worst_vs_bound, error / (q.scale(r, c) / 2.0));
      signal += static_cast<double>(w[i]) * w[i];
      noise += error * error;
    }
  row.relative_rms = signal > 0 ? std::sqrt(noise / signal) : 0;
  row.sqnr_db = noise > 0 ? 10 * std::log10(signal / noise) : INFINITY;
  return row;
}

std::vector<Scheme> stage_schemes(int cols) {
  using G = Granularity;
  const Symmetry sym = Symmetry::kSymmetric, asym = Symmetry::kAsymmetric;
  const std::vector<Scheme> all = {
      {Bits::kInt8, sym, G::kPerTensor},     {Bits::kInt8, sym, G::kPerChannel},
      {Bits::kInt8, sym, G::kGroup, 128},    {Bits::kInt8, asym, G::kPerChannel},
      {Bits::kInt4, sym, G::kPerChannel},    {Bits::kInt4, sym, G::kGroup, 128},
      {Bits::kInt4, sym, G::kGroup, 64},     {Bits::kInt4, sym, G::kGroup, 32},
      {Bits::kInt4, asym, G::kGroup, 128},   {Bits::kInt4, asym, G::kGroup, 32},
  };
  std::vector<Scheme> fitting;
  for (const Scheme& s : all)
    if (s.granularity != G::kGroup || cols % s.group_size == 0) fitting.push_back(s);
  return fitting;
}

}  // namespace book::quant
