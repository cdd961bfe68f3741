#include "chapters/14_quantization/kv_int8_measure.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>

#include "chapters/10_paged_attention/attention_cpu.h"
#include "chapters/10_paged_attention/block_manager.h"
#include "chapters/10_paged_attention/model_runner.h"
#include "chapters/10_paged_attention/served_model.h"
#include "chapters/11_continuous_batching/engine.h"
#include "chapters/14_quantization/kv_int8_attention.h"
#include "chapters/14_quantization/kv_int8_calibrate.h"
#include "common/check.h"
#include "common/rng.h"

namespace book::quant {
namespace {

// Sums of one comparison, in double.
struct ErrorSum {
  double squared_error = 0, squared_reference = 0, max_abs = 0, max_reference = 0;
  std::int64_t count = 0;
  void add(const float* reference, const float* got, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
      const double e = static_cast<double>(got[i]) - reference[i];
      squared_error += e * e;
      squared_reference += static_cast<double>(reference[i]) * reference[i];
      max_abs = std::max(max_abs, std::abs(e));
      max_reference = std::max(max_reference, std::abs(static_cast<double>(reference[i])));
    }
    count += static_cast<std::int64_t>(n);
  }
  KvErrorRow row(std::string data) const {
    return {std::move(data), count, max_abs,
            squared_reference > 0 ? std::sqrt(squared_error / squared_reference) : 0.0,
            max_reference};
  }
};

// One token's row (n_head · head_dim, head h at h · d) of position p, gathered from a view.
void gather_row(const kv::LayerKvView& view, std::span<const kv::BlockId> table, int p, float* keys,
                float* values) {
  const int bs = view.block_size, d = view.head_dim;
  for (int h = 0; h < view.n_head; ++h) {
    const std::size_t at = view.offset(table[p / bs], h, p % bs);
    std::copy_n(view.keys + at, d, keys + h * d);
    std::copy_n(view.values + at, d, values + h * d);
  }
}

}  // namespace

KvErrorRow int8_attention_error_random(int n_head, int head_dim, int queries, std::uint64_t seed,
                                       int threads) {
  BOOK_CHECK(n_head >= 1 && head_dim >= 1 && queries >= 1,
             "int8_attention_error_random: " << n_head << " heads of " << head_dim << ", "
                                             << queries << " queries; each must be >= 1");
  const kv::KvShape shape{1, n_head, head_dim};
  const int block_size = 16, positions = 300, blocks = kv::blocks_for(positions, block_size);
  Rng rng(seed);
  // A scattered table, as a paged cache has: block i of the sequence is pool block perm[i].
  std::vector<kv::BlockId> table(blocks + 5);
  std::iota(table.begin(), table.end(), 0);
  for (std::size_t i = table.size() - 1; i > 0; --i)
    std::swap(table[i], table[rng.uniform_int(0, static_cast<std::int64_t>(i))]);
  const int width = shape.numbers_per_layer_token();
  std::vector<float> keys(static_cast<std::size_t>(positions) * width), values(keys.size());
  for (auto& x : keys) x = static_cast<float>(rng.normal());
  for (auto& x : values) x = static_cast<float>(rng.normal());
  KvAbsmax absmax(shape);
  for (int p = 0; p < positions; ++p)
    absmax.observe(0, &keys[std::size_t(p) * width], &values[std::size_t(p) * width]);
  kv::PagedKvCache fp32(shape, static_cast<int>(table.size()), block_size);
  kv::PagedKvCache int8(shape, static_cast<int>(table.size()), block_size, kv_int8_scales(absmax));
  for (int p = 0; p < positions; ++p)
    for (kv::PagedKvCache* cache : {&fp32, &int8})
      cache->write(0, {table[p / block_size], p % block_size}, &keys[std::size_t(p) * width],
                   &values[std::size_t(p) * width]);
  std::vector<float> q(static_cast<std::size_t>(queries) * width);
  for (auto& x : q) x = static_cast<float>(rng.normal());
  std::vector<float> want(q.size(), NAN), got(q.size(), NAN);
  std::vector<kv::AttentionQuery> fp32_queries(queries), int8_queries(queries);
  for (int i = 0; i < queries; ++i) {
    const int context = static_cast<int>(rng.uniform_int(1, positions));
    fp32_queries[i] = {&q[std::size_t(i) * width], &want[std::size_t(i) * width], table, context};
    int8_queries[i] = {&q[std::size_t(i) * width], &got[std::size_t(i) * width], table, context};
  }
  kv::CpuPagedAttention(threads).run(fp32.layer(0), fp32_queries);
  Int8PagedAttention(threads).run(int8.layer_int8(0), int8_queries);
  ErrorSum sum;
  sum.add(want.data(), got.data(), want.size());
  return sum.row("random N(0,1), " + std::to_string(n_head) + " heads of " +
                 std::to_string(head_dim) + ", contexts 1-300");
}

std::vector<KvErrorRow> int8_attention_error_model(train::Model<float>& model,
                                                   const kv::KvInt8Scales& scales,
                                                   const std::vector<std::vector<int>>& sequences,
                                                   int threads) {
  const kv::KvShape shape = kv::kv_shape_of(model.config());
  scales.validate(shape);
  BOOK_CHECK(!sequences.empty(), "int8_attention_error_model: no sequences to run");
  std::size_t longest = 0;
  for (const auto& s : sequences) longest = std::max(longest, s.size());
  BOOK_CHECK(longest >= 1, "int8_attention_error_model: every sequence is empty");
  const int block_size = 4, rows = static_cast<int>(longest);
  const int blocks = kv::blocks_for(rows, block_size);
  kv::PagedKvCache fp32(shape, blocks, block_size), int8(shape, blocks, block_size, scales);
  kv::ModelRunner runner(model, fp32, rows);
  kv::CpuPagedAttention fp32_kernel(threads);
  Int8PagedAttention int8_kernel(threads);
  std::vector<ErrorSum> per_layer(shape.n_layer);
  const int width = shape.numbers_per_layer_token();
  std::vector<float> key_row(width), value_row(width), got;
  std::vector<kv::AttentionQuery> int8_queries;
  // Every layer: the FP32 kernel's output goes on through the model; the INT8 kernel reads the
  // same keys and values (copied into the INT8 cache, which quantises them) with the same queries.
  runner.use_attention([&](const kv::PagedKvCache& cache, int layer,
                           std::span<const kv::AttentionQuery> queries) {
    fp32_kernel.run(cache.layer(layer), queries);
    int context = 0;
    for (const auto& q : queries) context = std::max(context, q.context_len);
    const auto table = queries.front().block_table;  // one sequence per run
    for (int p = 0; p < context; ++p) {
      gather_row(cache.layer(layer), table, p, key_row.data(), value_row.data());
      int8.write(layer, {table[p / block_size], p % block_size}, key_row.data(), value_row.data());
    }
    got.assign(queries.size() * width, NAN);
    int8_queries.assign(queries.begin(), queries.end());
    for (std::size_t i = 0; i < queries.size(); ++i) int8_queries[i].out = &got[i * width];
    int8_kernel.run(int8.layer_int8(layer), int8_queries);
    for (std::size_t i = 0; i < queries.size(); ++i)
      per_layer[layer].add(queries[i].out, &got[i * width], width);
  });
  std::vector<kv::BlockId> table(blocks);
  std::iota(table.begin(), table.end(), 0);
  for (const auto& sequence : sequences) {
    BOOK_CHECK(!sequence.empty(), "int8_attention_error_model: a sequence is empty");
    const kv::SequenceChunk chunk{sequence, 0, table, false};
    runner.run({&chunk, 1});
  }
  std::vector<KvErrorRow> rows_out;
  for (int layer = 0; layer < shape.n_layer; ++layer)
    rows_out.push_back(per_layer[layer].row("addition model, layer " + std::to_string(layer)));
  return rows_out;
}

AdditionProblems addition_problems(const train::Config& config, int count, train::Split split,
                                   std::uint64_t seed) {
  BOOK_CHECK(count >= 1, "addition_problems: count must be >= 1, got " << count);
  const train::AdditionTask task(kv::addition_digits(config));
  Rng rng(seed);
  AdditionProblems problems;
  problems.answer_length = task.answer_length();
  for (int i = 0; i < count; ++i) {
    const auto [a, b] = task.sample(rng, split);
    auto tokens = task.encode(a, b);
    tokens.resize(task.model_context());
    problems.sequences.push_back(tokens);
    tokens.resize(task.prompt_length());
    problems.prompts.push_back(std::move(tokens));
    problems.sums.push_back(a + b);
  }
  return problems;
}

std::vector<std::vector<int>> addition_calibration(const train::Config& config, int count,
                                                   std::uint64_t seed) {
  BOOK_CHECK(count >= 1, "addition_calibration: count must be >= 1, got " << count);
  const train::AdditionTask task(kv::addition_digits(config));
  Rng rng(seed);
  std::vector<std::vector<int>> sequences;
  for (int i = 0; i < count; ++i) {
    const auto [a, b] = task.sample(rng, train::Split::kTrain);
    auto tokens = task.encode(a, b);
    tokens.resize(task.model_context());  // what the model reads: all but the last answer digit
    sequences.push_back(std::move(tokens));
  }
  return sequences;
}

EngineAnswers serve_addition(train::Model<float>& model, const AdditionProblems& problems,
                             const kv::KvInt8Scales* scales, int threads) {
  const int block_size = 2, num_blocks = 40;
  const kv::KvShape shape = kv::kv_shape_of(model.config());
  auto cache = scales ? std::make_unique<kv::PagedKvCache>(shape, num_blocks, block_size, *scales)
                      : std::make_unique<kv::PagedKvCache>(shape, num_blocks, block_size);
  const serve::SchedulerConfig config{32, 64, true};
  kv::ModelRunner runner(model, *cache, config.token_budget, kv::AttentionKernel::kFast, threads);
  if (scales) use_int8_attention(runner, threads);
  kv::BlockManager blocks(num_blocks, block_size, /*prefix_caching=*/false);
  serve::Engine engine(runner, blocks, config);
  for (const auto& prompt : problems.prompts)
    engine.submit({prompt, problems.answer_length, {}, {}});
  EngineAnswers answers;
  for (const serve::Completion& c : engine.run()) answers.tokens.push_back(c.tokens);
  BOOK_CHECK(answers.tokens.size() == problems.prompts.size(),
             "serve_addition: the engine finished " << answers.tokens.size() << " of "
                                                    << problems.prompts.size() << " requests");
  KvAccuracyRow& row = answers.row;
  row.precision = kv::kv_precision_name(cache->precision());
  row.problems = static_cast<int>(problems.prompts.size());
  for (std::size_t i = 0; i < answers.tokens.size(); ++i)
    row.correct += static_cast<int>(answers.tokens[i].size()) == problems.answer_length &&
                   train::AdditionTask::decode_answer(answers.tokens[i].data(),
                                                      problems.answer_length) == problems.sums[i];
  row.preemptions = engine.scheduler().preemptions();
  row.cache_bytes = static_cast<std::int64_t>(cache->bytes());
  return answers;
}

}  // namespace book::quant
