// Graded tests of kv.paged_attention (the reference kernel): against naive attention in double on
// the gathered contiguous cache, for ragged lengths, block sizes 1, 16 and 7 (which divides none
// of the lengths), causal prefill rows, and the contiguous layout; outputs poisoned before the
// call and unused slots full of NaN.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "chapters/10_paged_attention/paged_attention.h"
#include "common/testing/exercise.h"
#include "common/testing/expect_error.h"
#include "tests/10_paged_attention/paged_inputs.h"

namespace book::kv {
namespace {

using book::testing::expect_error;
using testing::make_paged_layer;
using testing::naive_attention;

// Float against double: each output is a convex combination of values in [-1, 1], and the
// float sums over at most a few hundred positions stay well inside 1e-5.
constexpr double kTolerance = 1e-5;

void expect_matches_naive(const testing::PagedLayer& layer, const std::vector<float>& out,
                          const char* what) {
  for (std::size_t s = 0; s < layer.lengths.size(); ++s) {
    const auto want =
        naive_attention(layer, s, layer.queries.data() + s * layer.width(), layer.lengths[s]);
    for (int i = 0; i < layer.width(); ++i)
      ASSERT_NEAR(out[s * layer.width() + i], want[i], kTolerance)
          << what << ": sequence " << s << " (length " << layer.lengths[s] << ", block size "
          << layer.block_size << "), output " << i << " (head " << i / layer.head_dim << ")";
  }
}

const std::vector<int> kRagged = {1, 5, 16, 17, 33, 100, 129};

EXERCISE_TEST("kv.paged_attention", PagedAttentionReference, MatchesNaiveForRaggedLengths) {
  for (const int bs : {1, 16, 7}) {
    const auto layer = make_paged_layer(kRagged, bs, 3, 16, 20 + bs);
    std::vector<float> out;
    const auto queries = layer.decode_queries(out);
    paged_attention_reference(layer.view(), queries);
    expect_matches_naive(layer, out, "paged");
  }
}

EXERCISE_TEST("kv.paged_attention", PagedAttentionReference, MatchesNaiveOnTheContiguousLayout) {
  const auto layer = make_paged_layer(kRagged, 16, 2, 24, 7, /*contiguous_len=*/160);
  std::vector<float> out;
  const auto queries = layer.decode_queries(out);
  paged_attention_reference(layer.view(), queries);
  expect_matches_naive(layer, out, "contiguous");
}

EXERCISE_TEST("kv.paged_attention", PagedAttentionReference, PrefillRowsAttendCausally) {
  // One sequence of 23 positions in blocks of 5: a query row per position p sees [0, p].
  const auto layer = make_paged_layer({23}, 5, 2, 8, 9);
  Rng rng(10);
  std::vector<float> qs(23 * layer.width()), out(qs.size(), std::nanf(""));
  for (auto& x : qs) x = static_cast<float>(rng.uniform(-1, 1));
  std::vector<AttentionQuery> queries;
  for (int p = 0; p < 23; ++p)
    queries.push_back(
        {qs.data() + p * layer.width(), out.data() + p * layer.width(), layer.tables[0], p + 1});
  paged_attention_reference(layer.view(), queries);
  for (int p = 0; p < 23; ++p) {
    const auto want = naive_attention(layer, 0, qs.data() + p * layer.width(), p + 1);
    for (int i = 0; i < layer.width(); ++i)
      ASSERT_NEAR(out[p * layer.width() + i], want[i], kTolerance)
          << "row " << p << " (context " << p + 1 << "), output " << i;
  }
}

EXERCISE_TEST("kv.paged_attention", PagedAttentionReference, RefusesQueriesItCannotServe) {
  const auto layer = make_paged_layer({10}, 4, 1, 8, 3);
  std::vector<float> out;
  auto queries = layer.decode_queries(out);
  paged_attention_reference(layer.view(), queries);  // fine
  queries[0].context_len = 13;                       // needs 4 blocks, the table has 3
  expect_error([&] { paged_attention_reference(layer.view(), queries); },
               "attends to 13 positions, which need 4 blocks of 4, but its block table has 3");
  queries[0].context_len = 0;
  expect_error([&] { paged_attention_reference(layer.view(), queries); },
               "needs at least its own (context_len >= 1)");
  std::vector<BlockId> bad = {0, 99, 1};
  queries[0] = {layer.queries.data(), out.data(), bad, 9};
  expect_error([&] { paged_attention_reference(layer.view(), queries); },
               "block table entry 1 is block 99, outside the pool");
}

}  // namespace
}  // namespace book::kv
