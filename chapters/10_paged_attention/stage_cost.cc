// The stage's section "What a token costs": 2 · layers · KV heads · head_dim · element size, for
// the models this chapter serves and for real ones.
#include <cstdint>
#include <cstdio>
#include <iostream>

#include "chapters/10_paged_attention/kv_shape.h"
#include "chapters/10_paged_attention/stage.h"
#include "common/table.h"

namespace book::kv::stage {
namespace {

std::string bytes_text(double bytes) {
  char text[32];
  if (bytes >= 1 << 30)
    std::snprintf(text, sizeof text, "%.2f GiB", bytes / (1 << 30));
  else if (bytes >= 1 << 20)
    std::snprintf(text, sizeof text, "%.2f MiB", bytes / (1 << 20));
  else if (bytes >= 1 << 10)
    std::snprintf(text, sizeof text, "%.1f KiB", bytes / (1 << 10));
  else
    std::snprintf(text, sizeof text, "%.0f B", bytes);
  return text;
}

}  // namespace

void cost_section() {
  struct Model {
    const char* name;
    KvShape shape;
    DType element;
    int context;
  };
  const Model models[] = {
      {"chapter 4's addition GPT (served below)", {2, 4, 16}, DType::kF32, 8},
      {"the random long-context GPT (served below)", {4, 8, 32}, DType::kF32, 1024},
      {"OPT-13B (the vLLM paper's example)", {40, 40, 128}, DType::kF16, 2048},
      {"Llama-2-7B", {32, 32, 128}, DType::kF16, 4096},
      {"Llama-3-8B (grouped-query: 8 KV heads)", {32, 8, 128}, DType::kBF16, 8192},
      {"Llama-3-70B (8 KV heads)", {80, 8, 128}, DType::kBF16, 8192},
  };
  Table table({"model", "layers", "KV heads × head_dim", "element", "KV bytes / token",
               "one full-context request"});
  for (const Model& m : models) {
    const std::int64_t per_token = kv_bytes_per_token(m.shape, m.element);
    table.add_row({m.name, std::to_string(m.shape.n_layer),
                   std::to_string(m.shape.n_head) + " × " + std::to_string(m.shape.head_dim),
                   dtype_name(m.element),
                   std::to_string(per_token) + " (" + bytes_text(per_token) + ")",
                   std::to_string(m.context) +
                       " tokens: " + bytes_text(static_cast<double>(per_token) * m.context)});
  }
  std::cout << "## What one token costs: 2 · layers · KV heads · head_dim · element size\n\n"
            << table.markdown() << "\n";
}

}  // namespace book::kv::stage
