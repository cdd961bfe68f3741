// The stage's section "Copy-on-write": parallel sampling, n continuations forked from one prompt
// on a BlockManager, the blocks they hold together against a copy of the prompt each.
#include <iostream>
#include <numeric>

#include "chapters/10_paged_attention/block_manager.h"
#include "chapters/10_paged_attention/stage.h"

namespace book::kv::stage {

void copy_on_write_section(const StageOptions& o) {
  const int samples = 4, prompt_tokens = 200, new_tokens = 100;
  BlockManager manager(1024, o.block_size, false);
  std::vector<int> prompt(prompt_tokens);
  std::iota(prompt.begin(), prompt.end(), 0);
  manager.add_sequence(0, prompt);
  manager.mark_computed(0, prompt_tokens);
  for (SequenceId s = 1; s < samples; ++s) manager.fork(0, s);  // the samples share the prompt
  int copies = 0;
  for (int step = 0; step < new_tokens; ++step)
    for (SequenceId s = 0; s < samples; ++s) {
      const SlotReservation r = manager.append_token(s, static_cast<int>(1000 * s + step));
      copies += r.copy.has_value();
    }
  const std::int64_t shared_blocks = manager.num_used_blocks();
  const std::int64_t unshared_blocks = manager.logical_blocks();  // a copy of the prompt each
  std::cout << "## Copy-on-write: parallel sampling, n = " << samples << " from one "
            << prompt_tokens << "-token prompt, " << new_tokens << " new tokens each\n\n"
            << shared_blocks << " blocks in use with forks vs " << unshared_blocks
            << " if each sample copied the prompt ("
            << percent(1.0 - double(shared_blocks) / unshared_blocks) << " saved); " << copies
            << " blocks copied on write\n\n";
}

}  // namespace book::kv::stage
