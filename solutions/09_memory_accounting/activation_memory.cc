// Reference body of exercise mem.activation_bytes
// (chapters/09_memory_accounting/activation_memory.h).
#include "chapters/09_memory_accounting/activation_memory.h"

#include "common/check.h"

namespace book::mem {

//! [activation_bytes]
std::uint64_t activation_bytes_per_layer(const LayerActivationInputs& in) {
  check_activation_size(in);  // given: refuses sizes whose bytes overflow
  BOOK_CHECK(in.seq >= 1 && in.micro_batch >= 1 && in.hidden >= 1 && in.heads >= 1 &&
                 in.tensor_parallel >= 1,
             "activation_bytes_per_layer: s, b, h, a and t must be positive, got s="
                 << in.seq << " b=" << in.micro_batch << " h=" << in.hidden << " a=" << in.heads
                 << " t=" << in.tensor_parallel);
  BOOK_CHECK(
      in.heads % in.tensor_parallel == 0,
      "activation_bytes_per_layer: t=" << in.tensor_parallel << " does not divide a=" << in.heads);
  const std::uint64_t s = in.seq, b = in.micro_batch, h = in.hidden, a = in.heads,
                      t = in.tensor_parallel;
  const std::uint64_t sbh = s * b * h;
  const std::uint64_t scores = 5 * a * s * s * b;  // sbh · 5as/h: QKᵀ, softmax, dropout (+mask)
  switch (in.recompute) {
    case Recomputation::kNone:
      return in.sequence_parallel ? (34 * sbh + scores) / t : 10 * sbh + (24 * sbh + scores) / t;
    case Recomputation::kSelective:
      return in.sequence_parallel ? 34 * sbh / t : 10 * sbh + 24 * sbh / t;
    case Recomputation::kFull:
      return in.sequence_parallel ? 2 * sbh / t : 2 * sbh;
  }
  return 0;
}
//! [activation_bytes]

}  // namespace book::mem
