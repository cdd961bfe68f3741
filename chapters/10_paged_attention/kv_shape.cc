#include "chapters/10_paged_attention/kv_shape.h"

#include "common/check.h"

namespace book::kv {

void KvShape::validate() const {
  BOOK_CHECK(n_layer >= 1, "KvShape: n_layer must be >= 1, got " << n_layer);
  BOOK_CHECK(n_head >= 1, "KvShape: n_head must be >= 1, got " << n_head);
  BOOK_CHECK(head_dim >= 1, "KvShape: head_dim must be >= 1, got " << head_dim);
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
