/// @file
/// Round-to-nearest quantisation of a weight matrix: which values share a scale (one per tensor,
/// per output channel, or per group of consecutive inputs), symmetric or asymmetric, 8 or 4 bits,
/// and the INT4 packing (two values a byte). The chapter's exercises are declared here with the
/// argument checks both tracks share.
///
/// A matrix here is row-major [rows][cols] with **rows = output channels** and **cols = input
/// features**, the reduction dimension of y = W·x: a GEMV reads one row per output, and a group
/// is `group_size` consecutive inputs of one row. (Chapter 4 stores a linear layer's W as
/// [in, out]; chapter 14's model code transposes it once when it quantises.)
///
/// Symmetric: x ≈ s·q with q in [−(2^(b−1) − 1), 2^(b−1) − 1] (INT8 ±127, INT4 ±7) and s =
/// max|x| / q_max over the values sharing s. Asymmetric: x ≈ s·(q − z) with q in [0, 2^b − 1],
/// s = (max − min) / (2^b − 1) over the values sharing s (their range widened to include 0, so
/// that 0 is exact) and z = round(−min / s). Rounding is to nearest, ties away from zero
/// (std::lround), and every dequantised value is within s/2 of the original. A group whose
/// values are all zero gets s = 1 (and z = 0 or the integer that represents 0), so nothing
/// divides by zero and the zeros come back exact.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace book {
class Rng;
}

namespace book::quant {

/// Bits per quantised value.
enum class Bits { kInt8 = 8, kInt4 = 4 };

/// Whether a zero point is stored beside each scale.
enum class Symmetry {
  kSymmetric,   ///< x ≈ s·q, q symmetric around 0
  kAsymmetric,  ///< x ≈ s·(q − z), q in [0, 2^b − 1]
};

/// Which values share one scale.
enum class Granularity {
  kPerTensor,   ///< one scale for the whole matrix
  kPerChannel,  ///< one per row (output channel)
  kGroup,       ///< one per group_size consecutive values of a row
};

/// A quantisation scheme.
struct Scheme {
  Bits bits = Bits::kInt8;                             ///< 8 or 4
  Symmetry symmetry = Symmetry::kSymmetric;            ///< zero point or not
  Granularity granularity = Granularity::kPerChannel;  ///< who shares a scale
  int group_size = 128;  ///< values per group along a row (Granularity::kGroup only)

  /// A short name for tables: "int8 per-tensor", "int8 per-channel", "int4 g128",
  /// "int4 g128 asym", …
  std::string name() const;
};

/// The smallest integer a scheme stores: −127, −7, or 0 (asymmetric).
int qmin(const Scheme& scheme);
/// The largest: 127, 7, 255 or 15.
int qmax(const Scheme& scheme);

/// Throws book::Error naming the value unless `scheme` can quantise a [rows][cols] matrix: rows
/// and cols >= 1; for groups, group_size >= 1 and dividing cols (a group never spans two rows);
/// for INT4, an even number of values per row (two a byte, a row never shares a byte).
void check_scheme(const Scheme& scheme, int rows, int cols);

/// Throws book::Error naming `what`, the index and the value at the first NaN or infinity in
/// `values`: a scale computed from them would be NaN or infinite and every value in its group
/// would be lost.
void check_finite(std::span<const float> values, const char* what);

/// A quantised matrix: the integers, one scale per group and (asymmetric) one zero point per
/// group.
struct QuantizedMatrix {
  Scheme scheme;  ///< how it was quantised
  int rows = 0;   ///< output channels
  int cols = 0;   ///< input features (the reduction dimension)
  /// The integers, row-major. INT8: one byte each, two's complement when symmetric, unsigned when
  /// asymmetric. INT4: two a byte, value 2i in the low nibble of byte i and 2i + 1 in the high
  /// one, each stored unsigned: q + 8 when symmetric, q when asymmetric.
  std::vector<std::uint8_t> data;
  /// One per group, row-major [rows][groups_per_row()]; a single one per tensor.
  std::vector<float> scales;
  /// Asymmetric only, one per scale: z in [0, 2^b − 1]; empty when symmetric.
  std::vector<std::uint8_t> zeros;

  /// Values that share a scale along a row: cols (per channel and per tensor) or group_size.
  int group_cols() const;
  /// Scales per row: cols / group_cols(), or 0 for per tensor (the one scale is shared).
  int groups_per_row() const;
  /// The integer q at (row, col), unpacked and without its offset.
  int q(int row, int col) const;
  /// The scale that (row, col) uses.
  float scale(int row, int col) const;
  /// The zero point that (row, col) uses (0 when symmetric).
  int zero(int row, int col) const;
  /// The dequantised value s·(q − z) at (row, col).
  float value(int row, int col) const;
  /// Bytes stored: the integers, 4 per scale, 1 per zero point.
  std::size_t bytes() const;
  /// 8 · bytes() / (rows · cols): the bits a weight costs, scales included.
  double bits_per_weight() const;
};

/// Quantises the [rows][cols] matrix `w` by `scheme` (round to nearest). Throws book::Error if
/// the scheme does not fit the shape (check_scheme), w does not hold rows · cols values, or a
/// value is NaN or infinite (check_finite). Per-channel symmetric INT8 goes through the exercise
/// quant.per_channel_int8, INT4 packing through quant.int4_pack.
QuantizedMatrix quantize(std::span<const float> w, int rows, int cols, const Scheme& scheme);

/// Writes the dequantised matrix, [rows][cols] floats, into `out`. Throws book::Error if out does
/// not hold rows · cols values or the matrix is inconsistent (its arrays' sizes).
void dequantize(const QuantizedMatrix& w, std::span<float> out);

/// Throws book::Error unless `w`'s arrays have the sizes its scheme and shape imply (and its
/// scheme fits its shape): what a kernel checks before it reads a matrix it did not make.
void check_matrix(const QuantizedMatrix& w);

/// Throws book::Error naming `who` unless m >= 1, x holds m · cols and y m · rows floats: what
/// every kernel that runs a rows × cols matrix on m rows of x checks first (CPU and GPU).
void check_gemv_call(const char* who, int rows, int cols, std::span<const float> x, int m,
                     std::span<const float> y);

/// A consistent random rows × cols matrix of `scheme` for kernel tests and benchmarks (a kernel's
/// speed and its agreement with the reference do not depend on where the integers came from, and
/// no exercise is involved, so both tracks can use it): every stored integer drawn from the
/// scheme's whole range, scales in [0.005, 0.05], zero points anywhere in [0, 2^b − 1]. Throws
/// book::Error if the scheme does not fit the shape.
QuantizedMatrix random_quantized_matrix(const Scheme& scheme, int rows, int cols, Rng& rng);

/// Exercise quant.per_channel_int8: symmetric INT8 with one scale per row: s_r = max_c |w[r][c]|
/// / 127 (1 if the row is all zeros), q = lround(w / s_r) (within [−127, 127] by construction).
/// Returns a QuantizedMatrix with scheme {kInt8, kSymmetric, kPerChannel}. Throws book::Error if
/// rows or cols < 1, w does not hold rows · cols values, or a value is NaN or infinite.
/// \exercise{quant.per_channel_int8}
QuantizedMatrix quantize_per_channel_int8(std::span<const float> w, int rows, int cols);

/// Exercise quant.int4_pack: packs 4-bit values (each in [0, 15]) two a byte, value 2i in the low
/// nibble of byte i and 2i + 1 in the high nibble. Throws book::Error if the count is odd or a
/// value exceeds 15.
/// \exercise{quant.int4_pack}
std::vector<std::uint8_t> pack_int4(std::span<const std::uint8_t> nibbles);

/// Exercise quant.int4_pack, the other way: the 2 · packed.size() values, low nibble first.
/// \exercise{quant.int4_pack}
std::vector<std::uint8_t> unpack_int4(std::span<const std::uint8_t> packed);

/// Exercise quant.int8_gemv: y = W·x for a symmetric INT8 matrix W (any granularity) and FP32 x:
/// for each row r, y[r] = Σ over its groups g of s_g · (Σ over c in g of q[r][c] · x[c]), the
/// inner sum in float in column order, the groups added in order. Throws book::Error unless W is
/// INT8 symmetric and consistent (check_matrix), x holds cols and y rows values.
/// \exercise{quant.int8_gemv}
void int8_gemv(const QuantizedMatrix& w, std::span<const float> x, std::span<float> y);

/// Exercise quant.smooth_scales: SmoothQuant's per-input-channel scales s_j = max|X_j|^α /
/// max|W_j|^(1−α), from each input channel's largest activation magnitude (over calibration
/// tokens) and its largest weight magnitude (over output channels). X·W is unchanged when X's
/// column j is divided by s_j and W's input channel j multiplied by it; α moves the difficulty
/// from activations (α → 1) to weights. A channel whose activation or weight maximum is 0 gets
/// s_j = 1 (nothing to balance). Throws book::Error if the spans differ in size or are empty, α
/// is outside [0, 1] or not finite, or a maximum is negative, NaN or infinite.
/// \exercise{quant.smooth_scales}
std::vector<float> smooth_scales(std::span<const float> activation_absmax,
                                 std::span<const float> weight_absmax, double alpha);

/// What awq_search found for one matrix.
struct AwqSearch {
  double alpha = 0;             ///< the best exponent on the grid
  std::vector<float> scales;    ///< per input channel: multiply W's column j, divide x_j
  double error = 0;             ///< mean squared output error at the best α
  double error_plain = 0;       ///< the same with no scaling (α = 0): plain round-to-nearest
};

/// Exercise quant.awq_search: AWQ's per-input-channel scaling, searched. The salient inputs are
/// those with large activations; scaling W's column j up by s_j before quantising (and x_j down
/// by it) gives those weights more of the grid. For α = i / grid, i = 0..grid: s_j = m_j^α with
/// m_j = mean over tokens of |x[t][j]| (a channel with m_j = 0 gets s_j = 1), normalised by
/// √(max s · min s); quantise W·diag(s) by `scheme`, dequantise, divide column j by s_j, and
/// measure the mean over tokens and rows of (y − ŷ)², y = x·Wᵀ the FP32 output. Keep the α with
/// the smallest error (the first on ties). `w` is [rows][cols] (rows = outputs), `x` is [tokens]
/// [cols] calibration activations. Throws book::Error if the shapes do not match, tokens < 1,
/// grid < 1, a value is NaN or infinite, or the scheme does not fit (check_scheme).
/// \exercise{quant.awq_search}
AwqSearch awq_search(std::span<const float> w, int rows, int cols, std::span<const float> x,
                     int tokens, const Scheme& scheme, int grid = 20);

}  // namespace book::quant
