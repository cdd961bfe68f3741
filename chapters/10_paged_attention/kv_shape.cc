#include "chapters/10_paged_attention/kv_shape.h"

#include <limits>

#include "common/check.h"

namespace book::kv {

void KvShape::validate() const {
  BOOK_CHECK(n_layer >= 1, "KvShape: n_layer must be >= 1, got " << n_layer);
  BOOK_CHECK(n_head >= 1, "KvShape: n_head must be >= 1, got " << n_head);
  BOOK_CHECK(head_dim >= 1, "KvShape: head_dim must be >= 1, got " << head_dim);
  // In int64: n_head · head_dim in int wrapped (65536 · 65536 gave 0, empty buffers, and write()
  // copied to null).
  const std::int64_t per_layer = std::int64_t{n_head} * head_dim;
  BOOK_CHECK(per_layer <= std::numeric_limits<int>::max(),
             "KvShape: n_head · head_dim = " << n_head << " · " << head_dim << " = " << per_layer
                                             << " numbers per token and layer, more than an int "
                                                "holds; use fewer or smaller heads");
  const std::int64_t bytes = 2 * per_layer * static_cast<std::int64_t>(sizeof(float));
  BOOK_CHECK(bytes <= kMaxKvBytes / n_layer, "KvShape: one token's keys and values would take 2 · "
                                                 << n_layer << " · " << per_layer
                                                 << " · 4 bytes, more than " << kMaxKvBytes
                                                 << "; use a smaller shape");
}

std::int64_t kv_pool_numbers(const char* who, const KvShape& shape, std::int64_t blocks,
                             int block_size) {
  shape.validate();
  check_block_size(who, block_size);
  BOOK_CHECK(blocks >= 1, who << ": the pool needs at least 1 block, got " << blocks);
  const std::int64_t per_token = shape.numbers_per_token();  // keys and values, <= 2^38
  const std::int64_t bytes_per_token = per_token * static_cast<std::int64_t>(sizeof(float));
  // Compared by division, so that nothing here wraps.
  BOOK_CHECK(blocks <= kMaxKvBytes / bytes_per_token / block_size,
             who << ": " << blocks << " blocks of " << block_size << " tokens at "
                 << bytes_per_token << " bytes per token would take "
                 << static_cast<double>(blocks) * block_size * static_cast<double>(bytes_per_token)
                 << " bytes, more than " << kMaxKvBytes << " (1 TiB); use fewer blocks");
  return blocks * block_size * (per_token / 2);
}

std::int64_t KvShape::numbers_per_token() const {
  return 2 * std::int64_t{n_layer} * n_head * head_dim;
}

std::int64_t kv_bytes_per_token(const KvShape& shape, DType element) {
  shape.validate();
  return shape.numbers_per_token() * static_cast<std::int64_t>(dtype_size(element));
}

void check_block_size(const char* who, int block_size) {
  BOOK_CHECK(block_size >= 1, who << ": block size must be >= 1 token, got " << block_size
                                  << " (vLLM's default is 16)");
}

int blocks_for(std::int64_t tokens, int block_size) {
  check_block_size("blocks_for", block_size);
  BOOK_CHECK(tokens >= 0, "blocks_for: a sequence cannot have " << tokens << " tokens");
  return static_cast<int>((tokens + block_size - 1) / block_size);
}

}  // namespace book::kv
