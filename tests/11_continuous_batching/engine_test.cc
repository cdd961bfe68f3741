// Graded tests of the engine on chapter 4's model (random weights) and chapter 10's paged cache,
// through serve.schedule_step, serve.preempt, serve.chunked_prefill and serve.sample_top_p:
// batch invariance (each request's tokens equal its output served alone), chunked prefill equals
// unchunked, preempted-and-resumed equals uninterrupted (greedy and seeded sampling), stop and
// max tokens, streaming, and the engine's argument checks.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include "chapters/10_paged_attention/served_model.h"
#include "chapters/11_continuous_batching/engine.h"
#include "common/rng.h"
#include "common/testing/exercise.h"
#include "common/testing/expect_error.h"
#include "tests/11_continuous_batching/test_engine.h"

namespace book::serve {
namespace {

using book::testing::expect_error;

using book::serve::testing::Server;

std::vector<GenerationRequest> random_requests(std::uint64_t seed, int n, bool sample) {
  Rng rng(seed);
  std::vector<GenerationRequest> out(n);
  for (int i = 0; i < n; ++i) {
    out[i].prompt.resize(rng.uniform_int(2, 34));
    for (int& t : out[i].prompt) t = static_cast<int>(rng.uniform_int(0, 49));
    out[i].max_tokens = static_cast<int>(rng.uniform_int(3, 24));
    if (sample) out[i].sampling = {0.9, 20, 0.9, 1000 + static_cast<std::uint64_t>(i)};
  }
  return out;
}

// What each request generates served alone, on a roomy cache, its prompt in one step.
std::vector<std::vector<int>> alone(const std::vector<GenerationRequest>& requests) {
  std::vector<std::vector<int>> out;
  for (const auto& request : requests) {
    Server server(64, 8, {1, 64, false});
    server.engine.submit(request);
    const auto done = server.engine.run();
    EXPECT_EQ(done.size(), 1u);
    EXPECT_EQ(done[0].preemptions, 0);
    out.push_back(done[0].tokens);
  }
  return out;
}

struct Served {
  std::vector<std::vector<int>> tokens;
  std::int64_t preemptions = 0;
  int max_batch = 0, prefill_chunks_beside_decodes = 0;
  PreemptionStats stats;
  std::int64_t bytes_out = 0, bytes_in = 0;
  int swapped_out_steps = 0;  // steps whose record says they swapped out
};

Served serve_together(const std::vector<GenerationRequest>& requests, int num_blocks,
                      SchedulerConfig config, bool prefix_caching = false) {
  Server server(num_blocks, 4, config, prefix_caching);
  Served s;
  std::size_t next = 0;
  std::map<RequestId, std::vector<int>> got;
  while (next < requests.size() || server.engine.has_work()) {
    if (next < requests.size()) server.engine.submit(requests[next++]);  // one arrives per step
    const StepRecord r = server.engine.step();
    s.max_batch = std::max(s.max_batch, r.decode_rows + r.prefill_chunks);
    if (r.decode_rows > 0 && r.prefill_chunks > 0) ++s.prefill_chunks_beside_decodes;
    s.swapped_out_steps += r.swapped_out > 0 ? 1 : 0;
    server.blocks.check_invariants();
    for (auto& c : server.engine.take_finished()) got[c.id] = c.tokens;
  }
  s.preemptions = server.engine.scheduler().preemptions();
  s.stats = server.engine.scheduler().preemption_stats();
  s.bytes_out = server.engine.swap_bytes_out();
  s.bytes_in = server.engine.swap_bytes_in();
  EXPECT_EQ(server.engine.scheduler().host_blocks_used(), 0) << "host blocks leaked";
  EXPECT_EQ(server.blocks.num_used_blocks(), 0) << "device blocks leaked";
  for (const auto& [id, tokens] : got) s.tokens.push_back(tokens);
  EXPECT_EQ(s.tokens.size(), requests.size()) << "every request finished once";
  return s;
}

EXERCISE_TEST("serve.schedule_step", Engine, BatchInvarianceUnderChunkingAndPreemption) {
  const auto requests = random_requests(1, 10, /*sample=*/false);
  const auto want = alone(requests);
  // 20 blocks of 4 = 80 slots for up to 4 requests of up to 57 positions: preemptions.
  const Served got = serve_together(requests, 20, {4, 12, true});
  for (std::size_t i = 0; i < requests.size(); ++i)
    EXPECT_EQ(got.tokens[i], want[i]) << "request " << i << " (prompt of "
                                      << requests[i].prompt.size() << " tokens) served beside "
                                      << "others differs from its output served alone";
  EXPECT_GT(got.preemptions, 0) << "the cache was meant to run out";
  EXPECT_GT(got.max_batch, 1);
  EXPECT_GT(got.prefill_chunks_beside_decodes, 0) << "prefill chunks must share steps with decodes";
}

EXERCISE_TEST("serve.schedule_step", Engine, ChunkedPrefillEqualsUnchunked) {
  const auto requests = random_requests(2, 8, /*sample=*/false);
  const Served chunked = serve_together(requests, 256, {3, 5, true});
  const Served whole = serve_together(requests, 256, {3, 64, false});
  EXPECT_EQ(chunked.preemptions, 0);
  for (std::size_t i = 0; i < requests.size(); ++i)
    EXPECT_EQ(chunked.tokens[i], whole.tokens[i])
        << "request " << i << ": prompt of " << requests[i].prompt.size()
        << " tokens in chunks of at most 5 rows vs in one step";
}

EXERCISE_TEST("serve.schedule_step", Engine, PreemptedAndResumedEqualsUninterruptedWhenSampling) {
  const auto requests = random_requests(3, 10, /*sample=*/true);
  const auto want = alone(requests);
  const Served tight = serve_together(requests, 18, {4, 10, true}, /*prefix_caching=*/true);
  EXPECT_GT(tight.preemptions, 0);
  for (std::size_t i = 0; i < requests.size(); ++i)
    EXPECT_EQ(tight.tokens[i], want[i]) << "request " << i << " (seed " << requests[i].sampling.seed
                                        << "): preempted and recomputed vs served alone";
}

// Preemption by swap: the victims' keys and values go to the host arena and come back; the
// tokens equal the uninterrupted run's bit for bit (a wrong copy reads the poisoned cache's NaN).
SchedulerConfig swapping(SchedulerConfig config, int host_blocks) {
  config.preemption = PreemptionMode::kSwap;
  config.host_blocks = host_blocks;
  return config;
}

EXERCISE_TEST("serve.schedule_step", Engine, SwappedAndResumedEqualsUninterrupted) {
  // K and V, 2 layers, width 32, float: 2 · 2 · 32 · 4 = 512 bytes per position.
  const std::int64_t bytes_per_position = 2 * 2 * 32 * 4;
  for (const bool sample : {false, true}) {
    const auto requests = random_requests(sample ? 6 : 5, 10, sample);
    const auto want = alone(requests);
    const Served got = serve_together(requests, 20, swapping({4, 12, true}, 64));
    EXPECT_GT(got.stats.swapped_out, 0) << "the cache was meant to run out";
    EXPECT_EQ(got.stats.recomputed, 0) << "64 host blocks hold every victim";
    EXPECT_EQ(got.stats.swapped_out, got.preemptions);
    EXPECT_EQ(got.stats.swapped_in, got.stats.swapped_out) << "every victim resumed";
    EXPECT_EQ(got.bytes_out, got.stats.positions_out * bytes_per_position);
    EXPECT_EQ(got.bytes_in, got.bytes_out) << "no prefix caching: every position comes back";
    EXPECT_GT(got.swapped_out_steps, 0);
    for (std::size_t i = 0; i < requests.size(); ++i)
      EXPECT_EQ(got.tokens[i], want[i]) << (sample ? "sampled" : "greedy") << " request " << i
                                        << ": swapped out and back vs served alone";
  }
}

EXERCISE_TEST("serve.schedule_step", Engine, SwapWithPrefixCachingEqualsUninterrupted) {
  // Prefix caching: a resumed request copies back only what the cache does not hold already.
  const auto requests = random_requests(3, 10, /*sample=*/true);
  const auto want = alone(requests);
  const Served got = serve_together(requests, 18, swapping({4, 10, true}, 64), true);
  EXPECT_GT(got.stats.swapped_out, 0);
  EXPECT_EQ(got.stats.swapped_in, got.stats.swapped_out);
  EXPECT_LE(got.bytes_in, got.bytes_out);
  EXPECT_EQ(got.bytes_in, got.stats.positions_in * 512);
  for (std::size_t i = 0; i < requests.size(); ++i)
    EXPECT_EQ(got.tokens[i], want[i]) << "request " << i << ": swapped with prefix caching";
}

EXERCISE_TEST("serve.schedule_step", Engine, AFullHostArenaFallsBackToRecompute) {
  const auto requests = random_requests(5, 10, /*sample=*/false);
  const auto want = alone(requests);
  // 2 host blocks of 4 positions: a victim with more than 8 computed positions is recomputed.
  const Served got = serve_together(requests, 20, swapping({4, 12, true}, 2));
  EXPECT_GT(got.stats.swap_fallbacks, 0) << "the arena was meant to be too small";
  EXPECT_EQ(got.stats.recomputed, got.stats.swap_fallbacks) << "every recompute is a fallback";
  EXPECT_GT(got.stats.dropped_positions, 0) << "the fallbacks' positions are run again";
  EXPECT_GT(got.stats.swapped_out, 0) << "small victims still fit the arena";
  EXPECT_EQ(got.stats.recomputed + got.stats.swapped_out, got.preemptions);
  for (std::size_t i = 0; i < requests.size(); ++i)
    EXPECT_EQ(got.tokens[i], want[i]) << "request " << i << ": swapped or recomputed vs alone";
}

EXERCISE_TEST("serve.schedule_step", Engine, CancelFreesBlocksAndLeavesTheOthersUnchanged) {
  const auto requests = random_requests(7, 8, /*sample=*/true);
  const auto want = alone(requests);
  Server server(20, 4, swapping({4, 12, true}, 8));
  std::vector<RequestId> ids;
  for (const auto& r : requests) ids.push_back(server.engine.submit(r));
  std::map<RequestId, std::vector<int>> got;
  std::set<RequestId> cancelled;
  bool cancelled_swapped = false;
  for (int step = 1; server.engine.has_work(); ++step) {
    server.engine.step();
    for (auto& c : server.engine.take_finished()) got[c.id] = c.tokens;
    const auto& scheduler = server.engine.scheduler();
    // Cancel one running request at step 3, one waiting at step 4 and the first swapped one.
    std::optional<RequestId> victim;
    if (step == 3 && !scheduler.state().running.empty()) victim = scheduler.state().running.back();
    if (step == 4 && !scheduler.state().waiting.empty()) victim = scheduler.state().waiting.back();
    if (!cancelled_swapped && !scheduler.swapped().empty()) {
      victim = scheduler.swapped().front();
      cancelled_swapped = true;
    }
    if (!victim) continue;
    const int used = server.blocks.num_used_blocks();
    const int held = server.blocks.contains(*victim)
                         ? static_cast<int>(server.blocks.block_table(*victim).size())
                         : 0;
    const int host = scheduler.host_blocks_used();
    EXPECT_TRUE(server.engine.cancel(*victim)) << "step " << step << ", request " << *victim;
    EXPECT_EQ(server.blocks.num_used_blocks(), used - held) << "its device blocks are free";
    EXPECT_LE(scheduler.host_blocks_used(), host);
    EXPECT_FALSE(server.engine.cancel(*victim)) << "cancelled twice";
    cancelled.insert(*victim);
    server.blocks.check_invariants();
  }
  EXPECT_EQ(cancelled.size(), 3u) << "a running, a waiting and a swapped-out request";
  EXPECT_TRUE(cancelled_swapped);
  EXPECT_EQ(server.blocks.num_used_blocks(), 0);
  EXPECT_EQ(server.engine.scheduler().host_blocks_used(), 0);
  EXPECT_EQ(got.size(), requests.size() - cancelled.size()) << "the cancelled never finish";
  for (std::size_t i = 0; i < requests.size(); ++i) {
    if (cancelled.count(ids[i])) {
      EXPECT_FALSE(got.count(ids[i])) << "request " << i << " was cancelled";
      continue;
    }
    EXPECT_EQ(got[ids[i]], want[i]) << "request " << i << ": unchanged by the others' cancel";
  }
  EXPECT_FALSE(server.engine.cancel(ids[0] + 100)) << "an unknown id";
}

EXERCISE_TEST("serve.schedule_step", Engine, StopTokensMaxTokensAndStreaming) {
  auto requests = random_requests(4, 4, /*sample=*/false);
  for (auto& r : requests) r.max_tokens = 12;
  const auto want = alone(requests);
  // Stop request 0 at its 4th token (the first time that token appears).
  const int stop = want[0][3];
  requests[0].stop_tokens = {stop};
  const auto first = std::find(want[0].begin(), want[0].end(), stop);
  const std::vector<int> stopped(want[0].begin(), first + 1);
  Server server(64, 4, {4, 16, true});
  std::map<RequestId, std::vector<int>> streamed;
  std::map<RequestId, int> last_flags;
  server.engine.on_token([&](RequestId id, int token, bool finished) {
    EXPECT_EQ(last_flags[id], 0) << "request " << id << " streamed a token after its last";
    streamed[id].push_back(token);
    last_flags[id] += finished ? 1 : 0;
  });
  for (const auto& r : requests) server.engine.submit(r);
  const auto done = server.engine.run();
  ASSERT_EQ(done.size(), 4u);
  EXPECT_EQ(done[0].tokens, stopped) << "stops after sampling the stop token " << stop;
  EXPECT_EQ(done[0].reason, FinishReason::kStop);
  for (int i = 1; i < 4; ++i) {
    EXPECT_EQ(done[i].tokens, want[i]) << "request " << i;
    EXPECT_EQ(done[i].reason, FinishReason::kLength);
    EXPECT_EQ(done[i].tokens.size(), 12u);
  }
  for (const auto& c : done) {
    EXPECT_EQ(streamed[c.id], c.tokens) << "request " << c.id << ": streamed vs returned";
    EXPECT_EQ(last_flags[c.id], 1);
    EXPECT_LE(c.first_token_step, c.finish_step);
  }
  EXPECT_EQ(server.blocks.num_used_blocks(), 0) << "finished requests free their blocks";
}

}  // namespace
}  // namespace book::serve
