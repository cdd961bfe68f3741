// The W8A8 GEMM's inner loops and their packed layouts (private to w8a8.cc). Each kernel works
// on one block of output channels at a time, the whole reduction, every token:
//
//   VNNI: weights [n / 64][k4 / 4][64][4] bytes (k4 = k rounded up to 4, n to 64, zeros
//         padding), activations staged as unsigned bytes q + 128 [tokens][k4].
//   AVX2: weights [n / 16][k2 / 2][16][2] bytes (k2 = k rounded up to 2), activations staged as
//         int16 [tokens][k2].
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace book::quant::detail {

/// Output channels per block of the VNNI kernel (4 registers of 16 int32).
inline constexpr int kVnniBlockN = 64;
/// Output channels per block of the AVX2 kernel (2 registers of 8 int32).
inline constexpr int kAvx2BlockN = 16;

/// `n` rounded up to a multiple of `m`.
inline int round_up(int n, int m) { return (n + m - 1) / m * m; }

/// The staged activations' row stride, in elements: the row rounded up, plus 64 bytes so that
/// the rows a register tile reads (k of 1024 or 4096 bytes apart, say) do not all fall in the
/// same L1 set and evict each other and the weights.
inline int vnni_stride(int cols) { return round_up(cols, 4) + 64; }
/// The same for the AVX2 kernel's int16 rows.
inline int avx2_stride(int cols) { return round_up(cols, 2) + 32; }

/// Packs row-major [rows][cols] integers for the VNNI kernel.
std::vector<std::int8_t> pack_vnni(std::span<const std::int8_t> plain, int rows, int cols);
/// Packs row-major [rows][cols] integers for the AVX2 kernel.
std::vector<std::int8_t> pack_avx2(std::span<const std::int8_t> plain, int rows, int cols);

/// Stages activations [tokens][cols] as q + 128 into `out` [tokens][vnni_stride(cols)].
void stage_vnni(std::span<const std::int8_t> q, int tokens, int cols,
                std::vector<std::uint8_t>& out);
/// Stages activations [tokens][cols] as int16 into `out` [tokens][avx2_stride(cols)].
void stage_avx2(std::span<const std::int8_t> q, int tokens, int cols,
                std::vector<std::int16_t>& out);

/// Quantises one token's `cols` activations with scale `s` into q, exactly as the scalar
/// definition q = lround(x / s) does (a correctly rounded division, then ties away from zero),
/// eight at a time with AVX2. Every |x / s| must be at most 127.5.
void quantize_row_avx2(const float* x, int cols, float s, std::int8_t* q);
/// The largest |x| of a row, with AVX2.
float absmax_avx2(const float* x, int cols);

/// The exact sums of output-channel block `block` for every token (staged activations `a`, rows
/// `lda` apart) into c[t · ldc + j], j <
/// min(kVnniBlockN, n − block · kVnniBlockN). `correction` is 128 · Σ_k q_w per (padded) channel.
void vnni_block(const std::uint8_t* a, int lda, int tokens, int k4, const std::int8_t* packed,
                const std::int32_t* correction, int n, int block, std::int32_t* c, int ldc);
/// The same for the AVX2 kernel's blocks of kAvx2BlockN channels.
void avx2_block(const std::int16_t* a, int lda, int tokens, int k2, const std::int8_t* packed,
                int n, int block, std::int32_t* c, int ldc);

}  // namespace book::quant::detail
