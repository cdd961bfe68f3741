// Tests of the chapter's scaffolding below the block manager: the KV formulas (counted), the
// paged and contiguous storage, the thread team, and the fast CPU kernel against naive attention
// on the gathered cache, bit-identical across block sizes, the contiguous layout and thread counts.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "chapters/10_paged_attention/attention_cpu.h"
#include "chapters/10_paged_attention/kv_cache.h"
#include "chapters/10_paged_attention/kv_shape.h"
#include "chapters/10_paged_attention/thread_team.h"
#include "common/testing/expect_error.h"
#include "tests/10_paged_attention/paged_inputs.h"

namespace book::kv {
namespace {

using book::testing::expect_error;
using testing::make_paged_layer;
using testing::naive_attention;

TEST(KvFormulas, BytesPerTokenAndBlocksPerSequence) {
  // 2 · layers · heads · head_dim · element size.
  EXPECT_EQ(kv_bytes_per_token({40, 40, 128}, DType::kF16), 819200)
      << "OPT-13B: the paper's 800 KB";
  EXPECT_EQ(kv_bytes_per_token({32, 32, 128}, DType::kF16), 524288) << "Llama-2-7B: 512 KiB";
  EXPECT_EQ(kv_bytes_per_token({2, 4, 16}, DType::kF32), 2 * 2 * 4 * 16 * 4) << "chapter 4's GPT";
  for (const int bs : {1, 16, 7})
    for (int len = 0; len <= 100; ++len)
      ASSERT_EQ(blocks_for(len, bs), (len + bs - 1) / bs) << len << " tokens, blocks of " << bs;
  EXPECT_EQ(blocks_for(33, 16), 3);
  expect_error([] { blocks_for(10, 0); }, "blocks_for: block size must be >= 1 token, got 0");
  expect_error([] { blocks_for(-1, 16); }, "cannot have -1 tokens");
  expect_error([] { kv_bytes_per_token({0, 4, 16}, DType::kF32); }, "n_layer must be >= 1, got 0");
}

// Review of issue 19: 65536 · 65536 wrapped to 0 in int, the buffers were empty and write()
// copied to null. Sizes are now computed in int64 and capped at kMaxKvBytes (1 TiB).
TEST(KvFormulas, ShapesAndPoolsWhoseSizesWouldWrapAreRefusedWithTheBytes) {
  expect_error(
      [] {
        PagedKvCache cache({1, 65536, 65536}, 1, 1);
      },
      "KvShape: n_head · head_dim = 65536 · 65536 = 4294967296 numbers per token and "
      "layer, more than an int holds");
  // 2 · 2^20 layers · 2^20 · 4 bytes = 2^43 bytes per token.
  expect_error(
      [] {
        kv_bytes_per_token({1 << 20, 1 << 10, 1 << 10}, DType::kF32);
      },
      "KvShape: one token's keys and values would take 2 · 1048576 · 1048576 · 4 bytes");
  // 1 layer of 8 · 128: 8192 bytes per token; 2^20 blocks of 2^10 tokens = 2^43 bytes.
  expect_error(
      [] {
        PagedKvCache cache({1, 8, 128}, 1 << 20, 1 << 10);
      },
      {"PagedKvCache: 1048576 blocks of 1024 tokens at 8192 bytes per token would take "
       "8.79609e+12 bytes, more than 1099511627776 (1 TiB)"});
  expect_error(
      [] {
        kv_pool_numbers("test", {1, 8, 128}, INT64_MAX, 16);
      },
      "test: 9223372036854775807 blocks of 16 tokens");
  EXPECT_EQ(kv_pool_numbers("test", {3, 2, 5}, 7, 4), 3 * 7 * 4 * 2 * 5)
      << "layers · blocks · block size · heads · head_dim";
}

TEST(PagedKvCache, HoldsExactlyItsBlocksAndWritesCopiesAndPoisons) {
  const KvShape shape{3, 2, 5};
  PagedKvCache cache(shape, 7, 4);
  EXPECT_EQ(cache.bytes(), static_cast<std::size_t>(7 * 4 * kv_bytes_per_token(shape, DType::kF32)))
      << "blocks · block size · bytes per token";
  cache.poison();
  std::vector<float> k(10), v(10);
  for (int i = 0; i < 10; ++i) k[i] = 1.0f + i, v[i] = -1.0f - i;
  cache.write(1, {5, 2}, k.data(), v.data());
  const LayerKvView view = cache.layer(1);
  for (int h = 0; h < 2; ++h)
    for (int d = 0; d < 5; ++d) {
      EXPECT_EQ(view.keys[view.offset(5, h, 2) + d], k[h * 5 + d]);
      EXPECT_EQ(view.values[view.offset(5, h, 2) + d], v[h * 5 + d]);
    }
  EXPECT_TRUE(std::isnan(view.keys[view.offset(5, 0, 1)])) << "a neighbouring slot is untouched";
  EXPECT_TRUE(std::isnan(cache.layer(0).keys[view.offset(5, 0, 2)]))
      << "another layer is untouched";
  cache.copy({5, 3, 3});  // slots 0..2 of block 5 into block 3, every layer
  EXPECT_EQ(view.keys[view.offset(3, 1, 2)], k[5]);
  EXPECT_EQ(view.values[view.offset(3, 0, 2)], v[0]);
  expect_error([&] { cache.write(3, {0, 0}, k.data(), v.data()); }, "layer 3 is not in 0..2");
  expect_error(
      [&] {
        cache.write(0, {7, 0}, k.data(), v.data());
      },
      "slot (block 7, offset 0) is outside the pool of 7 blocks of 4");
  expect_error([&] { cache.copy({0, 1, 5}); }, "5 tokens do not fit a block of 4");
  expect_error([&] { PagedKvCache bad(shape, 7, 0); }, "block size must be >= 1 token, got 0");
  expect_error([&] { PagedKvCache bad(shape, 0, 16); }, "at least 1 block, got 0");
}

TEST(ContiguousKvCache, ReservesWholeSlotsAndRefusesDoubleRelease) {
  ContiguousKvCache cache({2, 2, 4}, 2, 64);
  EXPECT_EQ(cache.max_len(), 64);
  EXPECT_EQ(cache.storage().bytes(),
            static_cast<std::size_t>(2 * 64 * kv_bytes_per_token({2, 2, 4}, DType::kF32)))
      << "every slot is max_len long whatever its sequence's length";
  const auto a = cache.acquire(), b = cache.acquire();
  ASSERT_TRUE(a && b);
  EXPECT_FALSE(cache.acquire().has_value()) << "two slots, two sequences";
  EXPECT_EQ(cache.in_use(), 2);
  cache.release(*a);
  expect_error([&] { cache.release(*a); }, "slot 0 is not taken");
  EXPECT_EQ(*cache.acquire(), *a);
  expect_error([] { ContiguousKvCache bad({2, 2, 4}, 0, 8); }, "room for 0 sequences of 8 tokens");
}

TEST(ThreadTeam, RunsEveryMemberAndRethrows) {
  ThreadTeam team(3);
  std::atomic<int> mask{0};
  for (int round = 0; round < 50; ++round) {
    mask = 0;
    team.run([&](int member) { mask |= 1 << member; });
    ASSERT_EQ(mask.load(), 7) << "round " << round;
  }
  EXPECT_THROW(team.run([](int member) {
    if (member == 2) throw std::runtime_error("member 2 failed");
  }),
               std::runtime_error);
  team.run([&](int member) { mask |= 1 << member; });  // still usable
  expect_error([] { ThreadTeam none(0); }, "needs at least 1 member");
}

const std::vector<int> kRagged = {1, 5, 16, 17, 33, 100, 129, 300};

std::vector<float> run_fast(const testing::PagedLayer& layer, int threads,
                            KernelPath path = best_kernel_path()) {
  std::vector<float> out;
  const auto queries = layer.decode_queries(out);  // poisoned with NaN
  CpuPagedAttention kernel(threads, path);
  kernel.run(layer.view(), queries);
  return out;
}

TEST(CpuPagedAttention, MatchesNaiveAttentionOnTheGatheredCache) {
  // head_dim 13 takes the scalar tail everywhere; 64 and 128 the vector paths.
  for (const int head_dim : {13, 64, 128})
    for (const int bs : {1, 16, 7}) {
      const auto layer = make_paged_layer(kRagged, bs, 3, head_dim, 40 + bs + head_dim);
      const auto out = run_fast(layer, 2);
      for (std::size_t s = 0; s < kRagged.size(); ++s) {
        const auto want =
            naive_attention(layer, s, layer.queries.data() + s * layer.width(), kRagged[s]);
        for (int i = 0; i < layer.width(); ++i)
          ASSERT_NEAR(out[s * layer.width() + i], want[i], 1e-5)
              << "head_dim " << head_dim << ", block size " << bs << ", sequence " << s
              << " (length " << kRagged[s] << "), output " << i
              << " (tolerance 1e-5: float against double, vector exp within 2 ulp)";
      }
    }
}

TEST(CpuPagedAttention, SameBitsForEveryBlockSizeTheContiguousLayoutAndThreadCount) {
  const auto reference = run_fast(make_paged_layer(kRagged, 16, 4, 64, 7, /*contiguous=*/320), 1);
  for (const int bs : {1, 16, 7, 64})
    for (const int threads : {1, 2, 3}) {
      const auto out = run_fast(make_paged_layer(kRagged, bs, 4, 64, 7), threads);
      ASSERT_EQ(out.size(), reference.size());
      EXPECT_EQ(std::memcmp(out.data(), reference.data(), out.size() * sizeof(float)), 0)
          << "block size " << bs << ", " << threads
          << " threads: paged outputs differ from contiguous ones in some bit";
    }
}

// Each instruction set on its own, on sizes that end every vector loop in a remainder: head_dim
// 1, 5, 13, 24, 40, 72 and 136 (none a multiple of 16; 24, 40, 72 and 136 multiples of 8, so
// AVX2 takes its four-position path and AVX-512 its masked tail), lengths that are not multiples
// of the block size (7, 16 or 5) nor of a register's 8 or 16 scores.
void expect_path_matches_double(KernelPath path) {
  const std::vector<int> lengths = {1, 3, 15, 17, 31, 33, 47, 130, 257};
  for (const int head_dim : {1, 5, 13, 24, 40, 72, 136})
    for (const int bs : {7, 16, 5}) {
      const auto layer = make_paged_layer(lengths, bs, 2, head_dim, 900 + bs * head_dim);
      const auto out = run_fast(layer, 2, path);
      for (std::size_t s = 0; s < lengths.size(); ++s) {
        const auto want =
            naive_attention(layer, s, layer.queries.data() + s * layer.width(), lengths[s]);
        for (int i = 0; i < layer.width(); ++i)
          ASSERT_NEAR(out[s * layer.width() + i], want[i], 1e-5)
              << kernel_path_name(path) << ", head_dim " << head_dim << ", block size " << bs
              << ", sequence " << s << " (length " << lengths[s] << "), output " << i
              << " (tolerance 1e-5: float against double; NaN means a slot was read unwritten or "
                 "an output left unwritten)";
      }
    }
  // Bit-identical across block sizes and the contiguous layout within one path, too.
  const auto reference = run_fast(make_paged_layer(lengths, 16, 3, 40, 5, 260), 1, path);
  for (const int bs : {1, 7, 16}) {
    const auto out = run_fast(make_paged_layer(lengths, bs, 3, 40, 5), 2, path);
    EXPECT_EQ(std::memcmp(out.data(), reference.data(), out.size() * sizeof(float)), 0)
        << kernel_path_name(path) << ", block size " << bs
        << ": paged outputs differ from contiguous ones in some bit";
  }
}

TEST(CpuPagedAttention, Avx512PathMatchesDoubleOnAwkwardSizes) {
  if (!kernel_path_available(KernelPath::kAvx512))
    GTEST_SKIP() << "this CPU has no AVX-512F (or the build is not x86-64 GCC/Clang): the "
                    "AVX-512 path cannot run here; the AVX2 and plain paths are tested";
  expect_path_matches_double(KernelPath::kAvx512);
}

TEST(CpuPagedAttention, Avx2PathMatchesDoubleOnAwkwardSizes) {
  if (!kernel_path_available(KernelPath::kAvx2))
    GTEST_SKIP() << "this build does not target AVX2 + FMA (the book's default is x86-64-v3)";
  expect_path_matches_double(KernelPath::kAvx2);
}

TEST(CpuPagedAttention, PlainPathMatchesDoubleOnAwkwardSizes) {
  expect_path_matches_double(KernelPath::kPlain);
}

TEST(CpuPagedAttention, RunsTheBestPathItIsOffered) {
  EXPECT_EQ(CpuPagedAttention().path(), best_kernel_path());
  EXPECT_TRUE(kernel_path_available(KernelPath::kPlain));
  EXPECT_STREQ(CpuPagedAttention(1, KernelPath::kPlain).path_name(), "plain loops");
  if (!kernel_path_available(KernelPath::kAvx512))
    expect_error([] { CpuPagedAttention kernel(1, KernelPath::kAvx512); },
                 "the AVX-512 path cannot run here");
}

TEST(CpuPagedAttention, RefusesQueriesItCannotServe) {
  const auto layer = make_paged_layer({10}, 4, 1, 8, 3);
  std::vector<float> out;
  auto queries = layer.decode_queries(out);
  CpuPagedAttention kernel;
  queries[0].context_len = 13;
  expect_error([&] { kernel.run(layer.view(), queries); },
               "CpuPagedAttention::run: query 0 attends to 13 positions, which need 4 blocks of 4");
  LayerKvView broken = layer.view();
  broken.block_size = 0;
  queries[0].context_len = 10;
  expect_error([&] { kernel.run(broken, queries); }, "block size must be >= 1 token, got 0");
  expect_error([] { CpuPagedAttention none(0); }, "needs at least 1 member");
}

}  // namespace
}  // namespace book::kv
