#include "chapters/10_paged_attention/kv_shape.h"
#include "chapters/10_paged_attention/paged_attention.h"
#include "common/check.h"

namespace book::kv {

void check_attention_args(const char* who, const LayerKvView& kv,
                          std::span<const AttentionQuery> queries) {
  BOOK_CHECK(kv.keys != nullptr && kv.values != nullptr,
             who << ": the KV view has no keys or values (null pointer)");
  BOOK_CHECK(kv.num_blocks >= 1 && kv.n_head >= 1 && kv.head_dim >= 1,
             who << ": the KV view needs positive sizes, got " << kv.num_blocks << " blocks, "
                 << kv.n_head << " heads, head_dim " << kv.head_dim);
  check_block_size(who, kv.block_size);
  for (std::size_t i = 0; i < queries.size(); ++i) {
    const AttentionQuery& q = queries[i];
    BOOK_CHECK(q.query != nullptr && q.out != nullptr,
               who << ": query " << i << " has a null query or output pointer");
    BOOK_CHECK(q.context_len >= 1,
               who << ": query " << i << " attends to " << q.context_len
                   << " positions; it needs at least its own (context_len >= 1)");
    const int needed = blocks_for(q.context_len, kv.block_size);
    BOOK_CHECK(static_cast<int>(q.block_table.size()) >= needed,
               who << ": query " << i << " attends to " << q.context_len
                   << " positions, which need " << needed << " blocks of " << kv.block_size
                   << ", but its block table has " << q.block_table.size());
    for (int b = 0; b < needed; ++b)
      BOOK_CHECK(q.block_table[b] >= 0 && q.block_table[b] < kv.num_blocks,
                 who << ": query " << i << "'s block table entry " << b << " is block "
                     << q.block_table[b] << ", outside the pool 0.." << kv.num_blocks - 1);
  }
}

}  // namespace book::kv
