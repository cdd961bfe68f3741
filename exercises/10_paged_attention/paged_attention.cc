// Exercise kv.paged_attention: write paged_attention_reference of
// chapters/10_paged_attention/paged_attention.h.
//
// Call check_attention_args("paged_attention_reference", kv, queries) first. Then for every query
// and every head h:
// - q is query.query + h·head_dim;
// - position t's key is at kv.keys + kv.offset(query.block_table[t / block_size], h,
//   t % block_size), its value likewise in kv.values;
// - scores s_t = q·K_t / √head_dim for t in [0, context_len); subtract their maximum, exp, sum;
// - out[h] (at query.out + h·head_dim) = Σ_t exp(s_t − max) / sum · V_t.
// Plain float loops are what is asked: the fast version is chapters/10_paged_attention/
// attention_cpu.cc, and the tests compare yours with naive attention in double.
// Test: bazel test --config=exercises //tests/10_paged_attention:paged_attention_test
#include "chapters/10_paged_attention/paged_attention.h"

#include "common/check.h"

namespace book::kv {

void paged_attention_reference(const LayerKvView& kv, std::span<const AttentionQuery> queries) {
  (void)kv, (void)queries;
  BOOK_NOT_IMPLEMENTED("kv.paged_attention", "exercises/10_paged_attention/paged_attention.cc",
                       "chapters/10_paged_attention/README.md, section Paged attention");
}

}  // namespace book::kv
