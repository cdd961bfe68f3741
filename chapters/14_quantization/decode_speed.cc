#include "chapters/14_quantization/decode_speed.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <memory>

#include "chapters/10_paged_attention/served_model.h"
#include "chapters/11_continuous_batching/engine.h"
#include "common/check.h"
#include "common/rng.h"

namespace book::quant {

namespace {

// Serves `prompts` through the engine; returns the completions' tokens by request and adds the
// decode-only steps' seconds and tokens.
std::vector<std::vector<int>> run_engine(train::Model<float>& model,
                                         const kv::ModelRunner::LayerLinear& linear,
                                         const std::vector<std::vector<int>>& prompts,
                                         int new_tokens, double* seconds, std::int64_t* tokens) {
  const int block_size = 16;
  const int longest = static_cast<int>(prompts[0].size()) + new_tokens;
  const int blocks =
      static_cast<int>(prompts.size()) * ((longest + block_size - 1) / block_size) + 1;
  const int budget = std::max<int>(64, static_cast<int>(prompts.size()));
  kv::PagedKvCache cache(kv::kv_shape_of(model.config()), blocks, block_size);
  kv::ModelRunner runner(model, cache, budget);
  runner.use_linear(linear);
  kv::BlockManager manager(blocks, block_size, /*prefix_caching=*/false);
  serve::Engine engine(runner, manager, {static_cast<int>(prompts.size()), budget, true});
  for (const auto& p : prompts) engine.submit({p, new_tokens, {}, {}});
  while (engine.has_work()) {
    const auto start = std::chrono::steady_clock::now();
    const serve::StepRecord r = engine.step();
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (r.prefill_rows == 0 && seconds) {
      *seconds += s;
      *tokens += r.decode_rows;
    }
  }
  std::vector<std::vector<int>> out(prompts.size());
  for (serve::Completion& c : engine.take_finished()) out[c.id] = std::move(c.tokens);
  return out;
}

}  // namespace

double DecodeSpeedRow::median() const {
  std::vector<double> v = tokens_per_second;
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

double DecodeSpeedRow::spread() const {
  if (tokens_per_second.size() < 2) return -1;
  const auto [lo, hi] = std::minmax_element(tokens_per_second.begin(), tokens_per_second.end());
  return (*hi - *lo) / median();
}

namespace {

// The FP32 projections through `kernel`: W transposed once into [out][in].
kv::ModelRunner::LayerLinear fp32_linear(train::Model<float>& model, const Fp32Kernel& kernel) {
  struct Projection {
    std::vector<float> w;
    const float* bias = nullptr;
    int out = 0;
    PreparedLinear product;
  };
  const train::Config& config = model.config();
  auto all = std::make_shared<std::vector<std::array<Projection, 4>>>(config.n_layer);
  for (int l = 0; l < config.n_layer; ++l)
    for (int p = 0; p < 4; ++p) {
      const ProjectionView v =
          projection_of(config, block_tensors(model, l), static_cast<train::Projection>(p));
      Projection& mine = (*all)[l][p];
      mine.w = out_by_in(v.w, v.in, v.out);
      mine.bias = v.bias;
      mine.out = v.out;
      mine.product = kernel(mine.w, v.out, v.in);
    }
  return [all](int layer, train::Projection which, const float* x, int rows, float* y) {
    const Projection& p = (*all)[layer][static_cast<int>(which)];
    p.product(x, rows, y);
    for (int t = 0; t < rows; ++t)
      for (int o = 0; o < p.out; ++o) y[static_cast<std::size_t>(t) * p.out + o] += p.bias[o];
  };
}

}  // namespace

std::vector<DecodeSpeedRow> decode_speed(const DecodeSpeedOptions& o, const LinearKernel& kernel,
                                         const Fp32Kernel& fp32_kernel) {
  BOOK_CHECK(o.d_model >= 16 && o.d_model % 16 == 0 && o.layers >= 1 && o.vocab >= 2 &&
                 o.requests >= 1 && o.prompt >= 1 && o.new_tokens >= 1 && o.repetitions >= 1 &&
                 o.prompt + o.new_tokens <= 1024,
             "decode_speed: d_model " << o.d_model << " (a multiple of 16), layers " << o.layers
                                      << ", vocab " << o.vocab << ", requests " << o.requests
                                      << ", prompt " << o.prompt << ", new_tokens " << o.new_tokens
                                      << ", repetitions " << o.repetitions
                                      << ": counts must be positive, prompt + new <= 1024");
  train::Config config;
  config.vocab_size = o.vocab;
  config.context = o.prompt + o.new_tokens;
  config.n_layer = o.layers;
  config.n_head = 16;
  config.d_model = o.d_model;
  auto model = kv::random_model(config, o.seed);
  Rng rng(o.seed + 1);
  std::vector<std::vector<int>> prompts(o.requests);
  for (auto& p : prompts)
    for (int t = 0; t < o.prompt; ++t)
      p.push_back(static_cast<int>(rng.uniform_int(0, o.vocab - 1)));
  const Scheme int8{Bits::kInt8, Symmetry::kSymmetric, Granularity::kPerChannel};
  const Scheme int4{Bits::kInt4, Symmetry::kSymmetric, Granularity::kGroup, o.int4_group};
  const QuantizedModel q8 = quantize_model(*model, int8);
  const QuantizedModel q4 = quantize_model(*model, int4);
  const std::size_t head = 4 * static_cast<std::size_t>(o.vocab) * o.d_model;
  std::vector<DecodeSpeedRow> rows(3);
  rows[0] = {fp32_kernel ? "FP32" : "FP32 (chapter 4's linear_forward)",
             32,
             4 * static_cast<std::size_t>(q8.block_weights()) + head,
             0,
             {}};
  rows[1] = {"INT8 per-channel", q8.block_bits_per_weight(), q8.block_bytes() + head, 0, {}};
  rows[2] = {"INT4 g" + std::to_string(o.int4_group), q4.block_bits_per_weight(), q4.block_bytes() + head, 0, {}};
  const kv::ModelRunner::LayerLinear linears[3] = {
      fp32_kernel ? fp32_linear(*model, fp32_kernel) : kv::ModelRunner::LayerLinear{},
      serve(q8, config, kernel), serve(q4, config, kernel)};
  for (int rep = 0; rep < o.repetitions; ++rep)
    for (int w = 0; w < 3; ++w) {
      double seconds = 0;
      std::int64_t tokens = 0;
      run_engine(*model, linears[w], prompts, o.new_tokens, &seconds, &tokens);
      rows[w].tokens_per_second.push_back(static_cast<double>(tokens) / seconds);
    }
  for (DecodeSpeedRow& r : rows)
    r.bytes_per_token = static_cast<double>(r.bytes_per_step) / o.requests;
  return rows;
}

Table decode_speed_table(const std::vector<DecodeSpeedRow>& rows) {
  Table t({"weights", "bits/weight", "bytes/step", "bytes/token", "tokens/s (median)", "spread"});
  for (const DecodeSpeedRow& r : rows)
    t.add_row({r.weights, fixed(r.bits_per_weight, 2), std::to_string(r.bytes_per_step),
               fixed(r.bytes_per_token, 0), fixed(r.median(), 1),
               r.spread() < 0 ? "n/a" : fixed(100 * r.spread(), 1) + "%"});
  return t;
}

int engine_correct(train::Model<float>& model, const QuantizedModel* q, int count,
                   std::uint64_t seed, const LinearKernel& kernel) {
  const kv::AdditionProblems problems = kv::held_out_additions(model.config(), count, seed);
  const kv::ModelRunner::LayerLinear linear =
      q ? serve(*q, model.config(), kernel) : kv::ModelRunner::LayerLinear{};
  return problems.count_correct(
      run_engine(model, linear, problems.prompts, problems.answer_tokens, nullptr, nullptr));
}

Table engine_accuracy_table(train::Model<float>& model, int count, std::uint64_t seed,
                            const LinearKernel& kernel) {
  Table t({"weights", "bits/weight", "correct", "problems", "accuracy"});
  const int fp32 = engine_correct(model, nullptr, count, seed, kernel);
  t.add_row({"FP32", "32.00", std::to_string(fp32), std::to_string(count),
             fixed(100.0 * fp32 / count, 1) + "%"});
  const Scheme schemes[2] = {{Bits::kInt8, Symmetry::kSymmetric, Granularity::kPerChannel},
                             {Bits::kInt4, Symmetry::kSymmetric, Granularity::kGroup, 32}};
  for (const Scheme& scheme : schemes) {
    const QuantizedModel q = quantize_model(model, scheme);
    const int correct = engine_correct(model, &q, count, seed, kernel);
    t.add_row({scheme.name(), fixed(q.block_bits_per_weight(), 2), std::to_string(correct),
               std::to_string(count), fixed(100.0 * correct / count, 1) + "%"});
  }
  return t;
}

}  // namespace book::quant
