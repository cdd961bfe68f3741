#include "chapters/04_training_baseline/config.h"

#include "common/check.h"

namespace book::train {

void Config::validate() const {
  BOOK_CHECK(vocab_size >= 2, "Config: vocab_size must be >= 2, got " << vocab_size);
  BOOK_CHECK(context >= 1, "Config: context must be >= 1, got " << context);
  BOOK_CHECK(n_layer >= 1, "Config: n_layer must be >= 1, got " << n_layer);
  BOOK_CHECK(n_head >= 1, "Config: n_head must be >= 1, got " << n_head);
  BOOK_CHECK(d_model >= 1 && d_model % n_head == 0,
             "Config: d_model (" << d_model << ") must be a positive multiple of n_head (" << n_head
                                 << ")");
}

std::int64_t Config::parameter_count() const {
  const std::int64_t c = d_model, f = d_ff();
  const std::int64_t per_block = 2 * c                // ln1
                                 + c * 3 * c + 3 * c  // qkv
                                 + c * c + c          // attention output projection
                                 + 2 * c              // ln2
                                 + c * f + f          // MLP up
                                 + f * c + c;         // MLP down
  return std::int64_t{vocab_size} * c + std::int64_t{context} * c + n_layer * per_block + 2 * c;
}

std::int64_t Config::matmul_parameter_count() const {
  const std::int64_t c = d_model, f = d_ff();
  return n_layer * (c * 3 * c + c * c + 2 * c * f) + std::int64_t{vocab_size} * c;
}

double Config::training_flops_per_token(int seq_len) const {
  return 6.0 * static_cast<double>(matmul_parameter_count()) +
         12.0 * n_layer * d_model * static_cast<double>(seq_len);
}

}  // namespace book::train
