// Presets and parameter counts of the shapes the calculator prices.
#include "chapters/09_memory_accounting/model_shape.h"

#include "chapters/04_training_baseline/data.h"
#include "common/check.h"

namespace book::mem {

void validate(const ModelShape& s) {
  const auto in_range = [](const char* flag, std::int64_t value, std::int64_t max) {
    BOOK_CHECK(value >= 1 && value <= max, flag << " must be in [1, " << max << "], got " << value
                                                << " (a model's size is positive and finite)");
  };
  in_range("--layers", s.n_layer, 100000);
  in_range("--d-model", s.d_model, std::int64_t{1} << 20);
  in_range("--heads", s.n_head, std::int64_t{1} << 16);
  in_range("--kv-heads", s.n_kv_head, std::int64_t{1} << 16);
  in_range("--d-ff", s.d_ff, std::int64_t{1} << 22);
  in_range("--vocab", s.vocab_size, std::int64_t{1} << 24);
  BOOK_CHECK(s.context >= 0 && s.context <= (1 << 24),
             "--context must be in [0, 2^24], got " << s.context);
  BOOK_CHECK(s.d_model % s.n_head == 0, "--heads " << s.n_head << " does not divide --d-model "
                                                   << s.d_model << "; pick a divisor");
  BOOK_CHECK(s.n_head % s.n_kv_head == 0, "--kv-heads " << s.n_kv_head
                                                        << " does not divide --heads " << s.n_head
                                                        << "; pick a divisor");
}

ParameterBreakdown parameters_of(const ModelShape& s) {
  validate(s);
  const std::int64_t h = s.d_model, f = s.d_ff, v = s.vocab_size;
  const std::int64_t kv = h / s.n_head * s.n_kv_head;  // width of k (and of v)
  ParameterBreakdown p;
  // q and o are h × h, k and v h × kv; the MLP has two matrices (GPT) or three (SwiGLU).
  p.layer_matrices = 2 * h * h + 2 * h * kv + (s.llama ? 3 : 2) * h * f;
  if (!s.llama) p.layer_matrices += (h + 2 * kv) + h + f + h;  // qkv, proj, fc, fc2 biases
  p.layer_norms = s.llama ? 2 * h : 4 * h;                     // two norms: gain (+ bias)
  p.embedding = v * h + std::int64_t{s.context} * h;
  p.head = (s.llama ? v * h : 0) + (s.llama ? h : 2 * h);  // untied head; final norm
  p.total = s.n_layer * (p.layer_matrices + p.layer_norms) + p.embedding + p.head;
  return p;
}

std::vector<std::string> preset_names() {
  return {"gpt3-175b", "llama2-7b", "llama2-13b", "llama2-70b", "book"};
}

ModelShape from_book_config(const train::Config& c) {
  ModelShape s;
  s.name = "book";
  s.n_layer = c.n_layer;
  s.d_model = c.d_model;
  s.n_head = s.n_kv_head = c.n_head;
  s.d_ff = c.d_ff();
  s.vocab_size = c.vocab_size;
  s.context = c.context;
  return s;
}

ModelShape preset(std::string_view name) {
  // Shapes: Brown et al. 2020, Table 2.1 (GPT-3); Touvron et al. 2023, Table 1 and the released
  // configs (Llama 2: 32000 tokens, SwiGLU widths 11008, 13824, 28672; 70B with 8 KV heads).
  const auto make = [&](int l, int h, int a, int kv, int f, int v, int ctx, bool llama) {
    ModelShape s;
    s.name = std::string(name);
    s.n_layer = l, s.d_model = h, s.n_head = a, s.n_kv_head = kv, s.d_ff = f;
    s.vocab_size = v, s.context = ctx, s.llama = llama;
    return s;
  };
  if (name == "gpt3-175b") return make(96, 12288, 96, 96, 4 * 12288, 50257, 2048, false);
  if (name == "llama2-7b") return make(32, 4096, 32, 32, 11008, 32000, 0, true);
  if (name == "llama2-13b") return make(40, 5120, 40, 40, 13824, 32000, 0, true);
  if (name == "llama2-70b") return make(80, 8192, 64, 8, 28672, 32000, 0, true);
  if (name == "book") {
    train::Config c;
    const train::AdditionTask task(3);
    c.vocab_size = train::AdditionTask::vocab_size();
    c.context = task.model_context();
    return from_book_config(c);
  }
  std::string valid;
  for (const std::string& n : preset_names()) valid += (valid.empty() ? "" : ", ") + n;
  BOOK_CHECK(false, "--model: unknown preset '"
                        << name << "' (valid: " << valid
                        << "; or give --layers, --d-model, ... for any shape)");
  return {};
}

}  // namespace book::mem
