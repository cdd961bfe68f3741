// Reference body of exercise mem.adam_8bit_step (chapters/09_memory_accounting/adam_8bit.h).
#include "chapters/09_memory_accounting/adam_8bit.h"

#include <algorithm>

#include "chapters/09_memory_accounting/quantize_8bit.h"
#include "common/check.h"

namespace book::mem {

//! [adam_8bit_step]
void adam8bit_step(std::span<float> params, std::span<const float> grads, Adam8bitState& state,
                   float lr, const train::AdamWConfig& config) {
  state.check_consistent("adam8bit_step");
  BOOK_CHECK(params.size() == grads.size() && params.size() == state.m.size() &&
                 params.size() == state.v.size() && state.block >= 1,
             "adam8bit_step: " << params.size() << " parameters, " << grads.size()
                               << " gradients, a state of " << state.m.size() << " elements");
  ++state.step;
  const std::size_t block = static_cast<std::size_t>(state.block);
  std::vector<float> m(block), v(block);  // one block of FP32 moments at a time
  for (std::size_t b = 0, begin = 0; begin < params.size(); ++b, begin += block) {
    const std::size_t n = std::min(block, params.size() - begin);
    const std::span<float> mb(m.data(), n), vb(v.data(), n);
    const auto codes_m = std::span(state.m).subspan(begin, n);
    const auto codes_v = std::span(state.v).subspan(begin, n);
    dequantize_signed(codes_m, state.m_scale[b], mb);
    dequantize_log(codes_v, state.v_scale[b], vb);
    train::adamw_step(params.subspan(begin, n), grads.subspan(begin, n), mb, vb, state.step, lr,
                      config);
    state.m_scale[b] = quantize_signed(mb, codes_m);
    state.v_scale[b] = quantize_log(vb, codes_v);
  }
}
//! [adam_8bit_step]

}  // namespace book::mem
