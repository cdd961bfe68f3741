// The engine the chapter-11 tests drive: chapter 4's model with random weights (a small config),
// chapter 10's paged cache, model runner and block manager, and this chapter's Engine, built
// together. Shared by engine_test (the track's exercise bodies) and checks_test (the reference
// ones); it brings no exercise bodies itself, so each test links its own.
#pragma once

#include <memory>

#include "chapters/10_paged_attention/served_model.h"
#include "chapters/11_continuous_batching/engine.h"
#include "chapters/11_continuous_batching/scheduler.h"

namespace book::serve::testing {

/// 2 layers, 4 heads, width 32, a vocabulary of 50 and a context of 80.
inline train::Config small_config() {
  train::Config c;
  c.vocab_size = 50;
  c.context = 80;
  c.n_layer = 2;
  c.n_head = 4;
  c.d_model = 32;
  return c;
}

/// A model, a cache of `num_blocks` blocks of `block_size`, a runner of the config's token budget,
/// a block manager and an engine over them. The cache is poisoned: a slot read before it is
/// written turns its logits into NaN.
struct Server {
  std::unique_ptr<train::Model<float>> model;
  kv::PagedKvCache cache;
  kv::ModelRunner runner;
  kv::BlockManager blocks;
  Engine engine;
  Server(int num_blocks, int block_size, SchedulerConfig config, bool prefix_caching = false)
      : model(kv::random_model(small_config(), 21)),
        cache(kv::kv_shape_of(small_config()), num_blocks, block_size),
        runner(*model, cache, config.token_budget),
        blocks(num_blocks, block_size, prefix_caching),
        engine(runner, blocks, config) {
    cache.poison();
  }
};

}  // namespace book::serve::testing
