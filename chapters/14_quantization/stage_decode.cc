// The stage's section "Decode speed through the engine": a random-weight model larger than the
// last-level cache decoded through chapter 11's engine with FP32, INT8 and INT4 weights on the
// chapter's fast kernels (gemv.h), and the trained addition model's answers through the same
// engine with quantised weights.
#include <iostream>
#include <memory>

#include "chapters/14_quantization/decode_speed.h"
#include "chapters/14_quantization/gemv.h"
#include "chapters/14_quantization/stage.h"
#include "common/table.h"

namespace book::quant::stage {
namespace {

// gemv.h's kernels behind model_quant.h's seam: prepared once per matrix when a model is served.
LinearKernel fast_kernel(int threads) {
  return [threads](const QuantizedMatrix& w) -> PreparedLinear {
    auto gemv = std::make_shared<QuantizedGemv>(w, GemvPath::kAuto, threads);
    return [gemv](const float* x, int rows, float* y) {
      gemv->run({x, static_cast<std::size_t>(rows) * gemv->cols()}, rows,
                {y, static_cast<std::size_t>(rows) * gemv->rows()});
    };
  };
}

Fp32Kernel fast_fp32_kernel(int threads) {
  return [threads](std::span<const float> w, int out, int in) -> PreparedLinear {
    auto gemv = std::make_shared<Fp32Gemv>(w, out, in, GemvPath::kAuto, threads);
    return [gemv](const float* x, int rows, float* y) {
      gemv->run({x, static_cast<std::size_t>(rows) * gemv->cols()}, rows,
                {y, static_cast<std::size_t>(rows) * gemv->rows()});
    };
  };
}

}  // namespace

void decode_section(const StageOptions& options) {
  std::cout << "\n## Decode speed through the engine\n\n";
  DecodeSpeedOptions o;
  if (options.tour) {
    o.d_model = 1024;
    o.layers = 2;
    o.new_tokens = 6;
    o.repetitions = 3;
  } else {
    o.repetitions = 5;
  }
  // One request (each step a GEMV: m = 1) and eight (m = 8: the decode work grows, the bytes
  // do not).
  std::vector<DecodeSpeedRow> single;
  for (const int requests : {1, 8}) {
    o.requests = requests;
    const std::vector<DecodeSpeedRow> rows =
        decode_speed(o, fast_kernel(options.threads), fast_fp32_kernel(options.threads));
    const Table table = decode_speed_table(rows);
    std::cout << "random-weight GPT, d_model " << o.d_model << ", " << o.layers << " layers, "
              << requests << (requests == 1 ? " request" : " requests decoding together") << ", "
              << options.threads << " threads; kernels: gemv.h ("
              << gemv_path_name(best_gemv_path())
              << "), the same loop for FP32 and the quantised weights; medians of "
              << o.repetitions << " interleaved repetitions\n"
              << table.markdown() << "\n";
    table.write_csv(results_dir() + "/ch14_decode_batch" + std::to_string(requests) + ".csv");
    if (requests == 1) single = rows;
  }

  const auto model = trained_model(options);
  const Table accuracy =
      engine_accuracy_table(*model, options.tour ? 200 : 1000, 2024, fast_kernel(options.threads));
  std::cout << "\nthe trained addition model's held-out sums through chapter 11's engine:\n"
            << accuracy.markdown();
  if (options.tour && single.size() >= 3) {
    const std::vector<DecodeSpeedRow>& rows = single;
    std::cout << "tour: 14 | decode tokens/s through the engine at batch 1, FP32 / INT8 / INT4 g128 ("
              << o.d_model << "-wide, " << o.layers << " layers) | "
              << fixed(rows[0].median(), 0) << " / " << fixed(rows[1].median(), 0) << " / "
              << fixed(rows[2].median(), 0) << " = 1 / "
              << fixed(rows[1].median() / rows[0].median(), 2) << "x / "
              << fixed(rows[2].median() / rows[0].median(), 2)
              << "x | decode is memory-bound: fewer bytes per weight, more tokens per second\n";
  }
}

}  // namespace book::quant::stage
