// Exercise pd.kv_transfer: write pack_kv and unpack_kv of
// chapters/13_disaggregation_speculation/pd/kv_transfer.h.
//
// pack_kv: refuse tokens < 1 and a table shorter than ⌈tokens / B⌉ blocks. Fill the header with
// the cache's shape and the token count, then for each layer, keys first then values, for each
// position p in [0, tokens), for each head h: copy head_dim floats from the pool at
// view.offset(table[p / B], h, p % B) (view = cache.layer(layer)).
// unpack_kv: call check_transfer first, then for each layer and each position p in
// [first, tokens), cache.write(layer, {table[p / B], p % B}, keys of p, values of p); in the
// packet one position's keys (all heads) are n_head · head_dim consecutive floats.
// Test: bazel test --config=exercises //tests/13_disaggregation_speculation/pd:kv_transfer_test
#include "chapters/13_disaggregation_speculation/pd/kv_transfer.h"

#include "common/check.h"

namespace book::pd {

KvPacket pack_kv(const kv::PagedKvCache& cache, std::span<const kv::BlockId> table, int tokens) {
  (void)cache, (void)table, (void)tokens;
  BOOK_NOT_IMPLEMENTED("pd.kv_transfer",
                       "exercises/13_disaggregation_speculation/pd/kv_transfer.cc",
                       "chapters/13_disaggregation_speculation/README.md, "
                       "section Prefill/decode disaggregation");
}

void unpack_kv(const KvPacket& packet, kv::PagedKvCache& cache, std::span<const kv::BlockId> table,
               int first) {
  (void)packet, (void)cache, (void)table, (void)first;
  BOOK_NOT_IMPLEMENTED("pd.kv_transfer",
                       "exercises/13_disaggregation_speculation/pd/kv_transfer.cc",
                       "chapters/13_disaggregation_speculation/README.md, "
                       "section Prefill/decode disaggregation");
}

}  // namespace book::pd
