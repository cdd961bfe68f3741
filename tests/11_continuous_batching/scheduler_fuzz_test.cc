// Graded test of serve.schedule_step (and serve.preempt inside it): the whole Scheduler under a
// seeded fuzzer with random arrivals, lengths and tiny KV budgets, preempting by recompute and
// then by swap: no request lost, duplicated or reordered within itself, the KV pool (and the host
// arena) never over budget and nothing leaked, never a hang.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "chapters/11_continuous_batching/scheduler.h"
#include "common/rng.h"
#include "common/testing/exercise.h"

namespace book::serve {
namespace {

// The token request `id` samples as its k-th output in the fuzzer: known in advance, so the
// finished sequences can be checked whole.
int fuzz_token(RequestId id, int k) { return static_cast<int>((id * 31 + k * 7) % 997); }

// What the fuzzer saw over all its seeds.
struct FuzzTotals {
  std::int64_t preemptions = 0, refused = 0, chunked_prompts = 0, finished_total = 0;
  PreemptionStats stats;  // summed
};

// The fuzzer: 60 seeds of random arrivals, lengths and tiny KV caches, prefix caching on or off
// (and, with `swap`, tiny host arenas of 1 to 6 blocks), every invariant checked after every step.
FuzzTotals fuzz(bool swap) {
  FuzzTotals total;
  std::int64_t& preemptions = total.preemptions;
  std::int64_t& refused = total.refused;
  std::int64_t& chunked_prompts = total.chunked_prompts;
  std::int64_t& finished_total = total.finished_total;
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    Rng rng(seed);
    const int block_size = static_cast<int>(rng.uniform_int(1, 6));
    const int num_blocks = static_cast<int>(rng.uniform_int(3, 14));
    const int max_running = static_cast<int>(rng.uniform_int(1, 5));
    SchedulerConfig cfg{max_running, max_running + static_cast<int>(rng.uniform_int(0, 12)),
                        rng.uniform() < 0.7};
    if (swap) {
      cfg.preemption = PreemptionMode::kSwap;
      cfg.host_blocks = static_cast<int>(rng.uniform_int(1, 6));
    }
    std::map<RequestId, int> swapped_positions;  // what each swapped-out request took along
    const bool prefix_caching = rng.uniform() < 0.3;
    kv::BlockManager blocks(num_blocks, block_size, prefix_caching);
    Scheduler scheduler(blocks, cfg, 64);
    std::map<RequestId, std::vector<int>> prompts;
    std::map<RequestId, int> max_tokens;
    std::map<RequestId, std::vector<int>> finished;
    const int arrivals = static_cast<int>(rng.uniform_int(5, 25));
    int arrived = 0, steps = 0;
    while (arrived < arrivals || scheduler.has_work()) {
      EXPECT_LT(++steps, 20000) << "seed " << seed << ": no progress (a hang)";
      if (steps >= 20000) return total;
      for (int k = rng.uniform_int(0, 2); k > 0 && arrived < arrivals; --k, ++arrived) {
        const int prompt_len = static_cast<int>(rng.uniform_int(1, 30));
        const int out = static_cast<int>(rng.uniform_int(1, 20));
        std::vector<int> prompt(prompt_len);
        for (int& t : prompt) t = static_cast<int>(rng.uniform_int(0, 3));  // shared prefixes
        try {
          const RequestId id = scheduler.add(prompt, out);
          prompts[id] = prompt;
          max_tokens[id] = out;
        } catch (const book::Error& e) {
          ++refused;  // a request that could never run: refused up front, with the numbers
          const std::string what = e.what();
          EXPECT_TRUE(what.find("could never run") != std::string::npos ||
                      what.find("token budget") != std::string::npos)
              << "seed " << seed << ": " << what;
        }
      }
      if (!scheduler.has_work()) continue;
      const std::map<RequestId, int> computed_before = [&] {
        std::map<RequestId, int> m;
        for (const RequestId id : scheduler.state().running) m[id] = blocks.computed(id);
        return m;
      }();
      const StepPlan plan = scheduler.schedule();
      EXPECT_FALSE(plan.chunks.empty()) << "seed " << seed;
      // A request comes back with exactly the positions it took to the host arena.
      for (const SwapCopy& in : plan.swapped_in) {
        EXPECT_EQ(in.positions, swapped_positions[in.id])
            << "seed " << seed << ", request " << in.id;
        // What the prefix cache already holds is not copied back; without it, all is.
        EXPECT_LE(in.first, in.positions) << "seed " << seed;
        if (!prefix_caching) EXPECT_EQ(in.first, 0) << "seed " << seed;
        EXPECT_GE(blocks.computed(in.id), in.positions) << "seed " << seed;
        if (!prefix_caching) EXPECT_EQ(blocks.computed(in.id), in.positions) << "seed " << seed;
        swapped_positions.erase(in.id);
      }
      for (const SwapCopy& out : plan.swapped_out) {
        EXPECT_TRUE(swap) << "seed " << seed << ": a swap under recompute";
        EXPECT_GT(out.positions, 0) << "seed " << seed;
        EXPECT_EQ(out.host_blocks.size(), (out.positions + block_size - 1) / block_size);
        swapped_positions[out.id] = out.positions;
      }
      EXPECT_LE(scheduler.host_blocks_used(), cfg.host_blocks) << "seed " << seed;
      EXPECT_LE(plan.tokens(), cfg.token_budget) << "seed " << seed;
      EXPECT_LE(static_cast<int>(scheduler.state().running.size()), cfg.max_running);
      std::set<RequestId> seen;
      bool prefill_seen = false;
      std::vector<int> sampled;
      for (const ScheduledChunk& c : plan.chunks) {
        EXPECT_TRUE(seen.insert(c.id).second)
            << "seed " << seed << ": request " << c.id << " twice in one step";
        EXPECT_FALSE(c.decode && prefill_seen) << "seed " << seed << ": a decode after a prefill";
        prefill_seen |= !c.decode;
        const Sequence& s = scheduler.sequence(c.id);
        EXPECT_EQ(c.start, blocks.computed(c.id)) << "seed " << seed << ": a gap or a repeat";
        if (computed_before.count(c.id) && !c.decode) {
          EXPECT_EQ(c.start, computed_before.at(c.id)) << "seed " << seed;
        }
        EXPECT_LE(c.start + c.count, blocks.length(c.id));
        EXPECT_EQ(c.samples, c.start + c.count == static_cast<int>(s.tokens.size()))
            << "seed " << seed << ": samples exactly when the chunk reaches the last token";
        if (!c.decode && !c.samples) ++chunked_prompts;
        if (c.samples) sampled.push_back(fuzz_token(c.id, s.generated()));
      }
      blocks.check_invariants();
      std::int64_t held = 0;
      for (const RequestId id : scheduler.state().running) held += blocks.block_table(id).size();
      EXPECT_LE(blocks.num_used_blocks(), num_blocks);
      EXPECT_GE(held, blocks.num_used_blocks()) << "every used block is some table's";
      scheduler.record(plan, sampled);
      for (const ScheduledChunk& c : plan.chunks) {
        const Sequence& s = scheduler.sequence(c.id);
        if (c.samples && s.generated() == s.max_tokens) {
          finished[c.id] = s.tokens;
          scheduler.finish(c.id);
        }
      }
      // The queues (and the swapped-out set) hold every unfinished request exactly once.
      std::multiset<RequestId> queued(scheduler.state().waiting.begin(),
                                      scheduler.state().waiting.end());
      queued.insert(scheduler.state().running.begin(), scheduler.state().running.end());
      for (const RequestId id : scheduler.swapped()) queued.insert(id);
      EXPECT_EQ(queued.size(), scheduler.state().sequences.size()) << "seed " << seed;
      for (const auto& [id, s] : scheduler.state().sequences)
        EXPECT_EQ(queued.count(id), 1u) << "seed " << seed << ": request " << id;
    }
    preemptions += scheduler.preemptions();
    EXPECT_EQ(finished.size(), prompts.size()) << "seed " << seed << ": a request was lost";
    for (const auto& [id, tokens] : finished) {
      std::vector<int> want = prompts[id];
      for (int k = 0; k < max_tokens[id]; ++k) want.push_back(fuzz_token(id, k));
      EXPECT_EQ(tokens, want) << "seed " << seed << ", request " << id
                              << ": its tokens are its prompt, then each sampled token once, in "
                                 "order";
    }
    EXPECT_EQ(blocks.num_used_blocks(), 0) << "seed " << seed << ": blocks leaked";
    EXPECT_EQ(scheduler.host_blocks_used(), 0) << "seed " << seed << ": host blocks leaked";
    const PreemptionStats& st = scheduler.preemption_stats();
    EXPECT_EQ(st.recomputed + st.swapped_out, scheduler.preemptions()) << "seed " << seed;
    EXPECT_EQ(st.swapped_in, st.swapped_out) << "seed " << seed << ": every swapped one resumed";
    if (!prefix_caching) EXPECT_EQ(st.positions_in, st.positions_out) << "seed " << seed;
    EXPECT_LE(st.positions_in, st.positions_out) << "seed " << seed;
    total.stats.swapped_out += st.swapped_out;
    total.stats.swap_fallbacks += st.swap_fallbacks;
    total.stats.dropped_positions += st.dropped_positions;
    finished_total += static_cast<std::int64_t>(finished.size());
  }
  return total;
}

EXERCISE_TEST("serve.schedule_step", SchedulerFuzz, NoRequestLostDuplicatedOrReorderedNeverAHang) {
  const FuzzTotals t = fuzz(/*swap=*/false);
  EXPECT_GT(t.preemptions, 20) << "the fuzzer must exercise preemption";
  EXPECT_GT(t.refused, 0) << "and refusals of requests too big for the cache";
  EXPECT_GT(t.chunked_prompts, 20) << "and chunked prompts";
  EXPECT_GT(t.finished_total, 200) << "most requests fit the tiny caches";
  EXPECT_EQ(t.stats.swapped_out, 0) << "recompute never swaps";
}

EXERCISE_TEST("serve.schedule_step", SchedulerFuzz, WithSwapNoRequestLostDuplicatedOrReordered) {
  const FuzzTotals t = fuzz(/*swap=*/true);
  EXPECT_GT(t.stats.swapped_out, 20) << "the fuzzer must exercise swapping";
  EXPECT_GT(t.stats.swap_fallbacks, 0) << "and a host arena too full to take a victim";
  EXPECT_GT(t.chunked_prompts, 20);
  EXPECT_GT(t.finished_total, 200);
}

}  // namespace
}  // namespace book::serve
