/// @file
/// The `quantize` stage's pieces: its options and one function per README section, each printing
/// its tables, writing results/ch14_*.csv and pictures, and (with --tour) its tour lines.
#pragma once

#include <memory>
#include <string>

#include "chapters/04_training_baseline/model.h"

namespace book::quant::stage {

/// The stage's command line.
struct StageOptions {
  bool tour = false;  ///< the tour's quick run: smaller matrices, fewer problems and repetitions
  /// chapter 4's trained addition checkpoint (default: the one Bazel trains)
  std::string checkpoint = "chapters/10_paged_attention/addition_checkpoint.bin";
  std::string argv0;  ///< the program, to find the checkpoint among its runfiles
  int threads = 2;    ///< threads for kernels and sweeps
};

/// The trained addition model the sections measure.
std::unique_ptr<train::Model<float>> trained_model(const StageOptions& options);

/// "Round to nearest": every scheme's bits and round-trip error, and the error-vs-bits picture.
void schemes_section(const StageOptions& options);
/// "Outliers", "SmoothQuant" and "AWQ": chapter 4's model with every scheme and fix, by task
/// accuracy, KL and top-1 against FP32; SmoothQuant's α on one layer, and its picture.
void model_section(const StageOptions& options);
/// "The INT8 KV cache": bytes per token, requests at once, attention error, engine accuracy.
void kv_section(const StageOptions& options);
/// "Decode speed through the engine": FP32, INT8 and INT4 weights on the fast kernels, tokens/s and
/// bytes per token; the addition model's accuracy through the engine.
void decode_section(const StageOptions& options);

}  // namespace book::quant::stage
