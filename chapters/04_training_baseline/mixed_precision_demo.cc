#include "chapters/04_training_baseline/mixed_precision_demo.h"

#include <cmath>
#include <cstdio>
#include <string>

namespace book::train {
namespace {

std::string mib(std::size_t bytes) { return book::fixed(bytes / 1048576.0, 3); }

std::string show(float value) {
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  if (std::isnan(value)) return "NaN";
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

}  // namespace

book::Table memory_table(const MemoryReport& m) {
  book::Table table({"buffer", "bytes", "MiB", "bytes/param"});
  const double n = static_cast<double>(m.parameters);
  auto row = [&](const std::string& name, std::size_t bytes) {
    if (bytes) table.add_row({name, std::to_string(bytes), mib(bytes), book::fixed(bytes / n, 2)});
  };
  row("FP32 master weights", m.master_weights);
  row("16-bit weights", m.low_weights);
  row("16-bit gradients", m.low_grads);
  row("FP32 gradients", m.fp32_grads);
  row("Adam m and v (FP32)", m.adam_moments);
  const std::size_t state =
      m.master_weights + m.low_weights + m.low_grads + m.fp32_grads + m.adam_moments;
  row("= model state", state);
  row("activations (one micro-batch)", m.activations);
  row("backward workspace", m.workspace);
  row("CPU emulation scratch (not on a GPU)", m.emulation_scratch);
  return table;
}

MemoryReport mixed_precision_memory(TrainOptions options) {
  options.precision = DType::kF16;
  return Trainer(options).memory();
}

book::Table precision_demo_table() {
  book::Table table({"value", "as FP16", "FP16, loss scale 65536, unscaled", "as BF16"});
  const float scale = 65536.0f;
  for (float value : {65504.0f, 65519.0f, 65520.0f, 70000.0f, 3e-5f, 1e-7f, 1e-8f}) {
    const float scaled = round_to(DType::kF16, value * scale) / scale;
    table.add_row({show(value), show(round_to(DType::kF16, value)), show(scaled),
                   show(round_to(DType::kBF16, value))});
  }
  // A real gradient: this model's, one batch at initialisation, FP32.
  TrainOptions options;
  Trainer trainer(options);
  Rng rng(5);
  const Batch batch = trainer.task().batch(rng, Split::kTrain, options.micro_batch);
  Model<float>& model = trainer.model();
  model.zero_grad();
  model.forward(batch.tokens.data(), batch.targets.data(), batch.batch, batch.seq_len);
  model.backward(1.0f);
  std::size_t nonzero = 0, lost_fp16 = 0, lost_scaled = 0, lost_bf16 = 0;
  for (float g : model.grads()) {
    if (g == 0) continue;
    ++nonzero;
    lost_fp16 += round_to(DType::kF16, g) == 0;
    lost_scaled += round_to(DType::kF16, g * scale) == 0;
    lost_bf16 += round_to(DType::kBF16, g) == 0;
  }
  auto share = [&](std::size_t lost) {
    return book::fixed(100.0 * lost / nonzero, 2) + "% flushed to 0";
  };
  table.add_row({"this model's gradient (" + std::to_string(nonzero) + " nonzero, one batch)",
                 share(lost_fp16), share(lost_scaled), share(lost_bf16)});
  return table;
}

}  // namespace book::train
