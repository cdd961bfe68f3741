/// @file
/// Block-wise 8-bit codes for Adam's moments, after Dettmers et al., "8-bit Optimizers via
/// Block-wise Quantization" (ICLR 2022): each block of elements keeps one FP32 scale (its largest
/// magnitude), so an outlier spoils only its own block.
///
/// The book's codes are simpler than the paper's dynamic tree quantisation but keep its point:
/// - m (signed, spread around 0): linear, q = round(127 · m / absmax), an int8;
/// - v (positive, spanning many orders of magnitude, and divided by): logarithmic, code c stands
///   for absmax · 2^(−c/8) (c = 0..254; 255 is zero), a uint8: every v keeps ~4% relative error
///   down to 2^−31.75 of its block's largest, where a linear code would round small v to 0 and
///   blow the update m/(√v + ε) up.
#pragma once

#include <cstdint>
#include <span>

namespace book::mem {

/// Encodes `m` into `q` (equal sizes); returns the block's scale (its largest |m|; 0 for zeros).
float quantize_signed(std::span<const float> m, std::span<std::int8_t> q);
/// Decodes `q` with `scale` into `m` (equal sizes).
void dequantize_signed(std::span<const std::int8_t> q, float scale, std::span<float> m);
/// Encodes non-negative `v` into log codes `q`; returns the scale (largest v; 0 for zeros).
/// Throws book::Error for a negative or non-finite v.
float quantize_log(std::span<const float> v, std::span<std::uint8_t> q);
/// Decodes log codes `q` with `scale` into `v`.
void dequantize_log(std::span<const std::uint8_t> q, float scale, std::span<float> v);

}  // namespace book::mem
