// The INT8 KV cache: chapter 10's PagedKvCache at KvPrecision::kInt8, chapter 14's calibration and
// INT8 attention, served through chapter 11's engine. Scaffolding (no exercise): a book_test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "chapters/10_paged_attention/block_manager.h"
#include "chapters/10_paged_attention/kv_cache.h"
#include "chapters/10_paged_attention/model_runner.h"
#include "chapters/10_paged_attention/served_model.h"
#include "chapters/11_continuous_batching/engine.h"
#include "chapters/14_quantization/kv_int8_attention.h"
#include "chapters/14_quantization/kv_int8_calibrate.h"
#include "chapters/14_quantization/kv_int8_measure.h"
#include "common/rng.h"
#include "common/testing/expect_error.h"

namespace book::quant {
namespace {

using book::testing::expect_error;

const std::string kCheckpoint = "chapters/10_paged_attention/addition_checkpoint.bin";

kv::KvInt8Scales uniform_scales(const kv::KvShape& shape, float scale) {
  const std::size_t heads = static_cast<std::size_t>(shape.n_layer) * shape.n_head;
  return {std::vector<float>(heads, scale), std::vector<float>(heads, scale)};
}

// softmax(q·Kᵀ/√d)·V in double on the dequantised INT8 view: the higher-precision reference.
std::vector<double> dequantised_reference(const kv::LayerKvInt8View& kv,
                                          const kv::AttentionQuery& query) {
  const int d = kv.head_dim, bs = kv.block_size, n = query.context_len;
  std::vector<double> out(static_cast<std::size_t>(kv.n_head) * d, 0.0), p(n);
  for (int h = 0; h < kv.n_head; ++h) {
    double top = -std::numeric_limits<double>::infinity();
    for (int t = 0; t < n; ++t) {
      const std::int8_t* k = kv.keys + kv.offset(query.block_table[t / bs], h, t % bs);
      double dot = 0;
      for (int i = 0; i < d; ++i) dot += double{query.query[h * d + i]} * kv.key_scales[h] * k[i];
      p[t] = dot / std::sqrt(double(d));
      top = std::max(top, p[t]);
    }
    double sum = 0;
    for (int t = 0; t < n; ++t) sum += (p[t] = std::exp(p[t] - top));
    for (int t = 0; t < n; ++t) {
      const std::int8_t* v = kv.values + kv.offset(query.block_table[t / bs], h, t % bs);
      for (int i = 0; i < d; ++i) out[h * d + i] += p[t] / sum * kv.value_scales[h] * v[i];
    }
  }
  return out;
}

TEST(KvInt8Attention, PlainAndVectorPathsMatchDequantisedDoubleReference) {
  Rng rng(141);
  // Awkward sizes: head_dim below, at and past every vector width and its remainders; block sizes
  // of 1, 3 and 16; contexts that end mid-block.
  for (const int head_dim : {1, 5, 8, 16, 19, 33, 64, 100}) {
    for (const int block_size : {1, 3, 16}) {
      const kv::KvShape shape{1, 3, head_dim};
      const int positions = 77, blocks = kv::blocks_for(positions, block_size) + 4;
      kv::KvInt8Scales scales;
      for (int h = 0; h < shape.n_head; ++h) {  // some numbers past 127·s: they saturate
        scales.keys.push_back(static_cast<float>(rng.uniform(0.005, 0.03)));
        scales.values.push_back(static_cast<float>(rng.uniform(0.005, 0.03)));
      }
      kv::PagedKvCache cache(shape, blocks, block_size, scales);
      cache.poison();
      std::vector<kv::BlockId> table(blocks);
      std::iota(table.begin(), table.end(), 0);
      for (std::size_t i = table.size() - 1; i > 0; --i)
        std::swap(table[i], table[rng.uniform_int(0, static_cast<std::int64_t>(i))]);
      const int width = shape.numbers_per_layer_token();
      std::vector<float> k(width), v(width);
      for (int p = 0; p < positions; ++p) {
        for (auto& x : k) x = static_cast<float>(rng.normal());
        for (auto& x : v) x = static_cast<float>(rng.normal());
        cache.write(0, {table[p / block_size], p % block_size}, k.data(), v.data());
      }
      const int queries = 5;
      std::vector<float> q(static_cast<std::size_t>(queries) * width);
      for (auto& x : q) x = static_cast<float>(rng.uniform(-2, 2));
      std::vector<kv::AttentionQuery> batch(queries);
      std::vector<float> out(q.size());
      for (int i = 0; i < queries; ++i)
        batch[i] = {&q[std::size_t(i) * width], &out[std::size_t(i) * width], table,
                    i == 0 ? 1 : static_cast<int>(rng.uniform_int(1, positions))};
      const kv::LayerKvInt8View view = cache.layer_int8(0);
      for (const kv::KernelPath path :
           {kv::KernelPath::kPlain, kv::KernelPath::kAvx2, kv::KernelPath::kAvx512}) {
        if (!kv::kernel_path_available(path)) continue;
        for (const int threads : {1, 3}) {
          for (const bool plain_function : {false, true}) {
            if (plain_function && (path != kv::KernelPath::kPlain || threads != 1)) continue;
            std::fill(out.begin(), out.end(), std::numeric_limits<float>::quiet_NaN());
            if (plain_function)
              paged_attention_int8_plain(view, batch);
            else
              Int8PagedAttention(threads, path).run(view, batch);
            for (int i = 0; i < queries; ++i) {
              const std::vector<double> want = dequantised_reference(view, batch[i]);
              double v_max = 0;
              for (int h = 0; h < shape.n_head; ++h)
                v_max = std::max(v_max, 127.0 * scales.values[h]);
              for (int j = 0; j < width; ++j)
                // Tolerance 1e-5 · max|V|: float against double over head_dim ≤ 100 and 77
                // positions (measured errors are below 1e-6 · max|V|); NaN: a poisoned slot read.
                ASSERT_NEAR(out[std::size_t(i) * width + j], want[j], 1e-5 * v_max)
                    << "path " << kv::kernel_path_name(path)
                    << (plain_function ? " (plain fn)" : "") << ", threads " << threads
                    << ", head_dim " << head_dim << ", block size " << block_size << ", query " << i
                    << " (context " << batch[i].context_len << "), number " << j;
            }
          }
        }
      }
    }
  }
}

TEST(KvInt8Cache, BytesAreCountedExactly) {
  const kv::KvShape shape{3, 5, 7};
  const int blocks = 4, block_size = 6;
  const kv::PagedKvCache fp32(shape, blocks, block_size);
  const kv::PagedKvCache int8(shape, blocks, block_size, uniform_scales(shape, 0.1f));
  const std::int64_t numbers_per_token = 2 * 3 * 5 * 7;  // keys and values, every layer and head
  EXPECT_EQ(int8.bytes(), std::size_t(blocks * block_size * numbers_per_token * 1));
  EXPECT_EQ(fp32.bytes(), std::size_t(blocks * block_size * numbers_per_token * 4));
  EXPECT_EQ(int8.scale_bytes(), std::size_t(2 * 3 * 5 * 4));  // once per cache, not per token
  EXPECT_EQ(fp32.scale_bytes(), 0u);
  EXPECT_EQ(kv::kv_bytes_per_token(shape, kv::KvPrecision::kInt8), numbers_per_token);
  EXPECT_EQ(kv::kv_bytes_per_token(shape, kv::KvPrecision::kF32), 4 * numbers_per_token);
  // Half an FP16 cache, a quarter of the book's FP32 one.
  EXPECT_EQ(2 * kv::kv_bytes_per_token(shape, kv::KvPrecision::kInt8),
            kv::kv_bytes_per_token(shape, DType::kF16));
  EXPECT_EQ(int8.precision(), kv::KvPrecision::kInt8);
  EXPECT_EQ(fp32.precision(), kv::KvPrecision::kF32);
}

TEST(KvInt8Cache, WriteRoundsToNearestAndSaturates) {
  const kv::KvShape shape{2, 2, 4};
  kv::KvInt8Scales scales = uniform_scales(shape, 0.5f);
  scales.values[1 * 2 + 1] = 0.25f;  // layer 1, head 1's values
  kv::PagedKvCache cache(shape, 3, 2, scales);
  cache.poison();
  // x / 0.5: 2.52 → 3, 0.5 → 1 (ties away from zero), −0.5 → −1, 200 → 127, −2000 → −127, …
  const std::vector<float> keys = {1.26f, 0.25f, -0.25f, 100.0f, -1000.0f, 0.0f, 63.4f, -63.6f};
  const std::vector<float> values = {0.1f, -0.1f, 0.3f, -0.3f, 1.0f, 40.0f, -0.01f, 0.13f};
  cache.write(1, {2, 1}, keys.data(), values.data());
  const kv::LayerKvInt8View view = cache.layer_int8(1);
  const std::vector<int> want_keys = {3, 1, -1, 127, -127, 0, 127, -127};
  // head 0 at 0.5: 0.2 → 0, −0.2 → 0, 0.6 → 1, −0.6 → −1; head 1 at 0.25: 4, 160 → 127, −0.04 →
  // 0, 0.52 → 1.
  const std::vector<int> want_values = {0, 0, 1, -1, 4, 127, 0, 1};
  for (int h = 0; h < 2; ++h)
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(view.keys[view.offset(2, h, 1) + i], want_keys[h * 4 + i])
          << "head " << h << ", " << i;
      EXPECT_EQ(view.values[view.offset(2, h, 1) + i], want_values[h * 4 + i])
          << "head " << h << ", " << i;
    }
  EXPECT_EQ(view.keys[view.offset(2, 0, 0)], -128) << "a slot not written stays poisoned";
  EXPECT_EQ(view.key_scales[1], 0.5f);
  EXPECT_EQ(view.value_scales[1], 0.25f);
}

TEST(KvInt8Cache, CopyOnWriteCopiesTheBytes) {
  const kv::KvShape shape{2, 3, 5};
  kv::PagedKvCache cache(shape, 4, 3, uniform_scales(shape, 0.05f));
  cache.poison();
  Rng rng(3);
  std::vector<float> k(15), v(15);
  for (int layer = 0; layer < 2; ++layer)
    for (int slot = 0; slot < 3; ++slot) {
      for (auto& x : k) x = static_cast<float>(rng.normal());
      for (auto& x : v) x = static_cast<float>(rng.normal());
      cache.write(layer, {1, slot}, k.data(), v.data());
    }
  cache.copy({1, 3, 2});
  for (int layer = 0; layer < 2; ++layer) {
    const kv::LayerKvInt8View view = cache.layer_int8(layer);
    for (int h = 0; h < 3; ++h)
      for (int slot = 0; slot < 3; ++slot)
        for (int i = 0; i < 5; ++i) {
          const int from = view.keys[view.offset(1, h, slot) + i];
          const int to = view.keys[view.offset(3, h, slot) + i];
          EXPECT_EQ(to, slot < 2 ? from : -128)
              << "layer " << layer << " head " << h << " slot " << slot;
          if (slot < 2) {
            EXPECT_EQ(view.values[view.offset(3, h, slot) + i],
                      view.values[view.offset(1, h, slot) + i]);
          }
        }
  }
}

TEST(KvInt8Calibration, ScalesAreAbsmaxOver127WithTheMargin) {
  const kv::KvShape shape{1, 2, 3};
  KvAbsmax absmax(shape);
  const std::vector<float> k1 = {0.5f, -2.54f, 1.0f, 0.0f, 0.0f, 0.0f};
  const std::vector<float> v1 = {1.27f, 0.0f, 0.0f, 0.0f, -12.7f, 3.0f};
  const std::vector<float> k2 = {-1.0f, 2.0f, 0.0f, 0.0f, 0.0f, 0.0f};
  absmax.observe(0, k1.data(), v1.data());
  absmax.observe(0, k2.data(), v1.data());
  EXPECT_EQ(absmax.tokens(), 2);
  const kv::KvInt8Scales plain = kv_int8_scales(absmax);
  EXPECT_FLOAT_EQ(plain.keys[0], 2.54f / 127);
  EXPECT_EQ(plain.keys[1], 1.0f) << "a head whose keys were all zero gets scale 1";
  EXPECT_FLOAT_EQ(plain.values[0], 1.27f / 127);
  EXPECT_FLOAT_EQ(plain.values[1], 12.7f / 127);
  const kv::KvInt8Scales wide = kv_int8_scales(absmax, 0.25);
  EXPECT_FLOAT_EQ(wide.keys[0], 2.54f * 1.25f / 127);
}

TEST(KvInt8Calibration, PerfectScalesGiveASmallErrorOnTheTrainedModel) {
  auto model = kv::load_checkpoint_model(kv::runfile(kCheckpoint));
  const AdditionProblems problems =
      addition_problems(model->config(), 100, train::Split::kValidation, 77);
  // Scales from the very sequences measured: no number saturates, the grid is as fine as it can be.
  const kv::KvInt8Scales scales = calibrate_kv_int8(*model, problems.sequences);
  const std::vector<KvErrorRow> rows =
      int8_attention_error_model(*model, scales, problems.sequences);
  ASSERT_EQ(rows.size(), 2u);
  for (const KvErrorRow& row : rows) {
    // 8 bits over each head's range: a step of absmax/127, rounding error ≤ half of it. The
    // stage measures 0.5-0.7% relative RMS; bounds 2% and 1% of the largest output.
    EXPECT_GT(row.outputs, 0);
    EXPECT_LT(row.rel_rms, 0.02) << row.data;
    EXPECT_LT(row.max_abs, 0.01 * row.max_abs_fp32 + 0.02) << row.data;
  }
}

TEST(KvInt8Engine, ServesEveryRequestWithinTwoPointsOfFp32Accuracy) {
  auto model = kv::load_checkpoint_model(kv::runfile(kCheckpoint));
  const kv::KvInt8Scales scales =
      calibrate_kv_int8(*model, addition_calibration(model->config(), 128, 14));
  const AdditionProblems problems =
      addition_problems(model->config(), 200, train::Split::kValidation, 2025);
  const EngineAnswers fp32 = serve_addition(*model, problems, nullptr);
  const EngineAnswers int8 = serve_addition(*model, problems, &scales, 2);
  ASSERT_EQ(int8.tokens.size(), problems.prompts.size()) << "every request is served";
  for (const auto& tokens : int8.tokens) EXPECT_EQ(int(tokens.size()), problems.answer_length);
  EXPECT_GT(int8.row.preemptions, 0) << "the tight cache preempts (recompute) with INT8 too";
  EXPECT_EQ(int8.row.cache_bytes * 4, fp32.row.cache_bytes) << "a quarter of the FP32 cache";
  // Greedy outputs; the margin: INT8 may lose at most 2 percentage points (4 of 200 sums).
  EXPECT_GE(int8.row.correct, fp32.row.correct - 4)
      << "INT8 " << int8.row.correct << " vs FP32 " << fp32.row.correct << " of 200";
  EXPECT_GE(fp32.row.correct, 150) << "the checkpoint is a trained model";
}

TEST(KvInt8Refusals, BadScales) {
  const kv::KvShape shape{2, 2, 4};
  kv::KvInt8Scales zero = uniform_scales(shape, 0.1f);
  zero.keys[3] = 0.0f;
  expect_error([&] { kv::PagedKvCache(shape, 2, 2, zero); },
               {"key scale of layer 1, head 1 is 0", "finite and > 0"});
  kv::KvInt8Scales nan = uniform_scales(shape, 0.1f);
  nan.values[0] = std::numeric_limits<float>::quiet_NaN();
  expect_error([&] { kv::PagedKvCache(shape, 2, 2, nan); },
               {"value scale of layer 0, head 0", "nan"});
  kv::KvInt8Scales negative = uniform_scales(shape, -0.1f);
  expect_error([&] { kv::PagedKvCache(shape, 2, 2, negative); }, "-0.1");
  kv::KvInt8Scales short_scales = uniform_scales(shape, 0.1f);
  short_scales.values.pop_back();
  expect_error([&] { kv::PagedKvCache(shape, 2, 2, short_scales); },
               {"3 value scales", "2 layers × 2 heads", "4"});
  // A view whose scale went bad after the cache was made (the kernel checks too).
  kv::PagedKvCache cache(shape, 2, 2, uniform_scales(shape, 0.1f));
  kv::LayerKvInt8View view = cache.layer_int8(0);
  const float bad = -1.0f;
  view.value_scales = &bad;
  std::vector<float> q(8, 1.0f), out(8);
  const std::vector<kv::BlockId> table = {0};
  const kv::AttentionQuery query{q.data(), out.data(), table, 1};
  expect_error([&] { Int8PagedAttention().run(view, {&query, 1}); }, "finite and > 0");
  view.key_scales = nullptr;
  expect_error([&] { paged_attention_int8_plain(view, {&query, 1}); }, "null pointer");
}

TEST(KvInt8Refusals, NanWrittenLeavesTheSlotUnchanged) {
  const kv::KvShape shape{1, 2, 3};
  kv::PagedKvCache cache(shape, 2, 2, uniform_scales(shape, 0.1f));
  cache.poison();
  std::vector<float> k = {1, 2, 3, 4, 5, 6}, v = k;
  v[4] = std::numeric_limits<float>::quiet_NaN();
  expect_error(
      [&] {
        cache.write(0, {1, 0}, k.data(), v.data());
      },
      {"value 1 of head 1 in layer 0 is nan", "no code for a NaN"});
  k[0] = std::numeric_limits<float>::infinity();
  expect_error([&] { cache.write(0, {1, 0}, k.data(), k.data()); }, "key 0 of head 0");
  EXPECT_EQ(cache.layer_int8(0).keys[cache.layer_int8(0).offset(1, 0, 0)], -128)
      << "a refused write wrote nothing";
}

TEST(KvInt8Refusals, PrecisionMismatches) {
  const kv::KvShape shape{1, 2, 3};
  kv::PagedKvCache int8(shape, 2, 2, uniform_scales(shape, 0.1f));
  kv::PagedKvCache fp32(shape, 2, 2);
  expect_error([&] { int8.layer(0); }, {"holds int8", "layer_int8()"});
  expect_error([&] { fp32.layer_int8(0); }, {"holds fp32", "not int8"});
  expect_error([&] { fp32.int8_scales(); }, "holds fp32");
  KvAbsmax absmax(shape);
  const std::vector<kv::BlockId> table = {0};
  expect_error([&] { absmax.observe_cache(int8, table, 1); }, "holds int8");
  KvAbsmax other({1, 2, 4});
  expect_error([&] { other.observe_cache(fp32, table, 1); }, "not the calibration's");
}

TEST(KvInt8Refusals, CalibrationWithoutTokens) {
  const kv::KvShape shape{2, 2, 3};
  KvAbsmax absmax(shape);
  expect_error([&] { kv_int8_scales(absmax); }, "no calibration tokens");
  const std::vector<float> row(6, 1.0f);
  absmax.observe(0, row.data(), row.data());  // layer 1 still has none
  expect_error([&] { kv_int8_scales(absmax); }, "every layer needs at least one");
  absmax.observe(1, row.data(), row.data());
  expect_error([&] { kv_int8_scales(absmax, -0.1); }, "margin -0.1");
  std::vector<float> nan = row;
  nan[5] = std::numeric_limits<float>::quiet_NaN();
  expect_error([&] { absmax.observe(1, row.data(), nan.data()); }, {"head 1, number 2", "nan"});
  expect_error([&] { absmax.observe(2, row.data(), row.data()); }, "layer 2 is not in 0..1");
  auto model = kv::load_checkpoint_model(kv::runfile(kCheckpoint));
  expect_error([&] { calibrate_kv_int8(*model, {}); }, "no calibration sequences");
  expect_error([&] { calibrate_kv_int8(*model, {{1, 2}, {}}); }, "sequence 1 is empty");
  expect_error([&] { calibrate_kv_int8(*model, {{1, 99}}); }, "token 99");
}

TEST(KvInt8Refusals, RunnerAndEngineSayWhatToDo) {
  auto model = kv::load_checkpoint_model(kv::runfile(kCheckpoint));
  const kv::KvShape shape = kv::kv_shape_of(model->config());
  kv::PagedKvCache int8(shape, 8, 2, uniform_scales(shape, 0.05f));
  kv::ModelRunner runner(*model, int8, 16);
  const std::vector<int> tokens = {1, 2, 10};
  const std::vector<kv::BlockId> table = {0, 1};
  const kv::SequenceChunk chunk{tokens, 0, table, false};
  expect_error([&] { runner.run({&chunk, 1}); }, {"holds int8", "use_attention"});
  use_int8_attention(runner);
  EXPECT_EQ(runner.run({&chunk, 1}).size(), std::size_t(model->config().vocab_size));
  // Wrong shape: the scales of another model.
  const kv::KvShape other{shape.n_layer + 1, shape.n_head, shape.head_dim};
  expect_error([&] { int8_attention_error_model(*model, uniform_scales(other, 0.1f), {tokens}); },
               "scales for");
  kv::PagedKvCache fp32(shape, 8, 2);
  kv::ModelRunner fp32_runner(*model, fp32, 16);
  expect_error([&] { use_int8_attention(fp32_runner); }, {"is fp32, not int8", "chapter 10"});
  expect_error([&] { use_int8_attention(runner, 0); }, "threads must be >= 1");
  kv::BlockManager blocks(8, 2, false);
  serve::SchedulerConfig swap{4, 16, true};
  swap.preemption = serve::PreemptionMode::kSwap;
  swap.host_blocks = 4;
  expect_error([&] { serve::Engine(runner, blocks, swap); },
               {"preemption by swap", "int8", "kRecompute"});
}

}  // namespace
}  // namespace book::quant
