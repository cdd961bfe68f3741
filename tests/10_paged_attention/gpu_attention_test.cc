// The CUDA paged attention against naive attention in double on the gathered cache, for ragged
// lengths, block sizes 1, 16 and 7, several head sizes; the paged and contiguous layouts give the
// same bits on the GPU too. Skips, saying why, without a GPU.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "chapters/10_paged_attention/attention_cuda.h"
#include "common/testing/expect_error.h"
#include "common/testing/gpu.h"
#include "tests/10_paged_attention/paged_inputs.h"

namespace book::kv {
namespace {

using testing::make_paged_layer;
using testing::naive_attention;

const std::vector<int> kRagged = {1, 5, 16, 17, 33, 100, 129, 1000};

std::vector<float> run_gpu(const testing::PagedLayer& layer) {
  std::vector<float> out;
  const auto queries = layer.decode_queries(out);
  GpuPagedAttention kernel(layer.view());
  kernel.run(queries);
  return out;
}

TEST(GpuPagedAttention, MatchesNaiveAttentionOnTheGatheredCache) {
  BOOK_REQUIRE_GPU();
  for (const int head_dim : {13, 64, 128, 256})
    for (const int bs : {1, 16, 7}) {
      const auto layer = make_paged_layer(kRagged, bs, 3, head_dim, 50 + bs + head_dim);
      const auto out = run_gpu(layer);
      for (std::size_t s = 0; s < kRagged.size(); ++s) {
        const auto want =
            naive_attention(layer, s, layer.queries.data() + s * layer.width(), kRagged[s]);
        for (int i = 0; i < layer.width(); ++i)
          ASSERT_NEAR(out[s * layer.width() + i], want[i], 1e-5)
              << "head_dim " << head_dim << ", block size " << bs << ", sequence " << s
              << " (length " << kRagged[s] << "), output " << i << " (tolerance 1e-5: float "
              << "against double)";
      }
    }
}

TEST(GpuPagedAttention, PagedAndContiguousLayoutsGiveTheSameBits) {
  BOOK_REQUIRE_GPU();
  const auto want = run_gpu(make_paged_layer(kRagged, 16, 4, 64, 9, /*contiguous=*/1024));
  for (const int bs : {1, 16, 7}) {
    const auto got = run_gpu(make_paged_layer(kRagged, bs, 4, 64, 9));
    EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0)
        << "block size " << bs;
  }
}

TEST(GpuPagedAttention, RefusesQueriesItCannotServe) {
  BOOK_REQUIRE_GPU();
  const auto layer = make_paged_layer({10}, 4, 1, 8, 3);
  std::vector<float> out;
  auto queries = layer.decode_queries(out);
  GpuPagedAttention kernel(layer.view());
  queries[0].context_len = 13;
  book::testing::expect_error([&] { kernel.run(queries); },
                              "GpuPagedAttention::run: query 0 attends to 13 positions");
}

}  // namespace
}  // namespace book::kv
