/// @file
/// Decode speed with quantised weights through chapter 11's engine: a random-weight model large
/// enough that its weights do not fit the last-level cache (decode then reads every weight once
/// per step, so bytes per step set the pace), served with FP32, INT8 and INT4 weights, and the
/// addition model's answers through the same engine with quantised weights.
///
/// The linear kernel is a parameter: reference_kernel (model_quant.h) is simple and correct, not
/// fast, so until a vectorised kernel is passed the quantised rows measure that kernel, not what
/// the fewer bytes allow. The numbers are timings of this machine; compare the ratios.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "chapters/04_training_baseline/model.h"
#include "chapters/14_quantization/model_quant.h"
#include "common/table.h"

namespace book::quant {

/// What decode_speed runs.
struct DecodeSpeedOptions {
  int d_model = 1024;       ///< width (4 · d_model hidden), 16 heads
  int layers = 4;           ///< blocks: 12 · d_model² weights each
  int vocab = 256;          ///< vocabulary (small: the blocks' weights dominate)
  int requests = 8;         ///< requests decoding together (the batch)
  int prompt = 16;          ///< prompt tokens each
  int new_tokens = 8;       ///< tokens each generates
  int repetitions = 3;      ///< interleaved: FP32, INT8, INT4, FP32, …
  int int4_group = 128;     ///< the INT4 rows' group size (AWQ's and GPTQ's usual 128)
  std::uint64_t seed = 14;  ///< weights and prompts
};

/// One weight format's decode speed.
struct DecodeSpeedRow {
  std::string weights;                    ///< "FP32", "INT8 per-channel", "INT4 g128"
  double bits_per_weight = 32;            ///< of the block projections, scales included
  std::size_t bytes_per_step = 0;         ///< weights a decode step reads: block projections + head
  double bytes_per_token = 0;             ///< bytes_per_step / requests decoding in the step
  std::vector<double> tokens_per_second;  ///< decode-only steps, one per repetition
  double median() const;                  ///< median of tokens_per_second
  double spread() const;                  ///< (fastest − slowest) / median
};

/// Makes the FP32 product y [rows][out] = x [rows][in] · Wᵀ for W [out][in] (quant.h's layout;
/// `w` outlives the result): the FP32 peer of a LinearKernel, e.g. chapter 14's Fp32Gemv.
using Fp32Kernel = std::function<PreparedLinear(std::span<const float> w, int out, int in)>;

/// Serves options.requests random prompts through serve::Engine (all admitted together) with
/// each weight format, timing the steps that only decode. Quantised projections run `kernel`;
/// FP32 ones `fp32_kernel`, or chapter 4's linear_forward (the model's own path) when it is
/// empty. Throws book::Error on options that do not make a model (d_model not a multiple of 16,
/// counts < 1, prompt + new_tokens above 1024).
std::vector<DecodeSpeedRow> decode_speed(const DecodeSpeedOptions& options,
                                         const LinearKernel& kernel = reference_kernel,
                                         const Fp32Kernel& fp32_kernel = {});

/// The rows as a table: weights, bits/weight, bytes/step, bytes/token, tokens/s, spread.
Table decode_speed_table(const std::vector<DecodeSpeedRow>& rows);

/// Held-out addition problems answered greedily through serve::Engine by `model` with `q`'s
/// weights (null: FP32) and `kernel`: how many are right. Throws book::Error if q does not serve
/// the model (check_serves) or count < 1.
int engine_correct(train::Model<float>& model, const QuantizedModel* q, int count,
                   std::uint64_t seed, const LinearKernel& kernel = reference_kernel);

/// engine_correct for FP32, INT8 per-channel and INT4 g32 weights of `model` (an addition model):
/// a table of weights, bits/weight, correct, problems, accuracy.
Table engine_accuracy_table(train::Model<float>& model, int count, std::uint64_t seed,
                            const LinearKernel& kernel = reference_kernel);

}  // namespace book::quant
