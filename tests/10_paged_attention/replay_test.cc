// Tests of the workload and the memory replay (on the reference exercise bodies). The replay is
// a seeded simulation that counts slots, so its fractions are counted quantities: the tests assert
// them, and the invariants behind them (waste below one block, the breakdown summing to the
// budget).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "chapters/10_paged_attention/replay.h"
#include "chapters/10_paged_attention/workload.h"
#include "common/testing/expect_error.h"

namespace book::kv {
namespace {

using book::testing::expect_error;

TEST(Workload, IsSeededLongTailedAndFitsTheContext) {
  const WorkloadOptions options;
  const auto a = make_workload(options), b = make_workload(options);
  ASSERT_EQ(a.size(), 600u);
  int multimodal = 0;
  std::vector<int> prompts;
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].prompt, b[i].prompt) << "request " << i << ": the same seed, the same tokens";
    EXPECT_LE(a[i].total_tokens(), options.max_len) << "request " << i;
    EXPECT_GE(a[i].output_tokens, 1);
    multimodal += a[i].multimodal;
    if (a[i].multimodal) {
      EXPECT_GE(a[i].prompt.size(), 2u * options.image_tokens);
    }
    prompts.push_back(static_cast<int>(a[i].prompt.size()));
  }
  EXPECT_GE(multimodal, 4) << "about 2% of 600";
  std::sort(prompts.begin(), prompts.end());
  const double mean = std::accumulate(prompts.begin(), prompts.end(), 0.0) / prompts.size();
  EXPECT_GT(mean, 1.3 * prompts[prompts.size() / 2]) << "long tail: the mean well above the median";
  WorkloadOptions other = options;
  other.seed = 11;
  EXPECT_NE(make_workload(other)[0].prompt, a[0].prompt);
}

TEST(Workload, SharedSystemPromptsStartEveryPrompt) {
  WorkloadOptions options;
  options.requests = 12;
  options.system_prompts = 3;
  options.system_prompt_tokens = 50;
  const auto w = make_workload(options);
  for (const Request& r : w) {
    EXPECT_EQ(r.system_prompt, r.id % 3);
    const Request& first = w[r.system_prompt];
    EXPECT_TRUE(std::equal(first.prompt.begin(), first.prompt.begin() + 50, r.prompt.begin()))
        << "request " << r.id << " starts with system prompt " << r.system_prompt;
  }
  EXPECT_NE(w[0].prompt[0], w[1].prompt[0]);
  WorkloadOptions bad = options;
  bad.system_prompt_tokens = 2047;
  expect_error([&] { make_workload(bad); }, "leave no room in max_len 2048");
  bad = options;
  bad.requests = 0;
  expect_error([&] { make_workload(bad); }, "needs at least 1 request, got 0");
}

void expect_breakdown_sums_to_one(const ReplayResult& r) {
  const MemoryBreakdown& m = r.memory;
  EXPECT_NEAR(m.token_states + m.reserved + m.internal + m.unallocated, 1.0, 1e-9) << r.system;
  for (const double part : {m.token_states, m.reserved, m.internal, m.unallocated})
    EXPECT_GE(part, -1e-12) << r.system;
}

TEST(Replay, PagedWastesLessThanOneBlockPerSequenceAndFillsTheBudget) {
  const auto requests = make_workload({});
  for (const int bs : {1, 16, 7}) {
    PagedReplayOptions o;
    o.block_size = bs;
    const ReplayResult r = replay_paged(requests, o);
    EXPECT_LT(r.max_waste_per_sequence, bs) << "block size " << bs
                                            << ": at most the last block's "
                                               "unfilled slots";
    expect_breakdown_sums_to_one(r);
    EXPECT_EQ(r.memory.internal + r.memory.reserved > 0, bs > 1) << "block size " << bs;
    EXPECT_GT(r.steps_under_load, 100) << "the workload must keep the budget busy";
  }
  const ReplayResult paged = replay_paged(requests, {});
  EXPECT_GE(paged.memory.token_states, 0.96)
      << "the vLLM paper's 96.3%: paged KV memory holds tokens, not reservations";
}

TEST(Replay, ContiguousReservationsWasteWhatPagingSaves) {
  const auto requests = make_workload({});
  const ReplayResult paged = replay_paged(requests, {});
  for (const Reservation policy :
       {Reservation::kMaxLength, Reservation::kPowerOfTwo, Reservation::kExact}) {
    const ReplayResult r = replay_contiguous(requests, 16384, 2048, policy);
    expect_breakdown_sums_to_one(r);
    EXPECT_EQ(r.preemptions, 0) << "a reservation never runs out";
    EXPECT_LT(r.memory.token_states, paged.memory.token_states) << r.system;
    EXPECT_GT(r.steps, paged.steps) << r.system << ": fewer requests at once, more steps";
    if (policy == Reservation::kExact) {
      EXPECT_EQ(r.memory.internal, 0.0);
    }
  }
  const ReplayResult max = replay_contiguous(requests, 16384, 2048, Reservation::kMaxLength);
  EXPECT_EQ(max.max_running, 8) << "16384 slots hold eight 2048-token regions";
  EXPECT_GE(paged.mean_running / max.mean_running, 3.0) << "the \"3-4x more requests\" claim";
  EXPECT_LT(max.memory.token_states, 0.4) << "the vLLM paper's 20.4-38.2% for reservations";
}

TEST(Replay, PrefixCachingSharesSystemPrompts) {
  WorkloadOptions w;
  w.system_prompts = 4;
  w.system_prompt_tokens = 600;
  const auto requests = make_workload(w);
  PagedReplayOptions o;
  const ReplayResult plain = replay_paged(requests, o);
  o.prefix_caching = true;
  const ReplayResult cached = replay_paged(requests, o);
  EXPECT_EQ(plain.hit_blocks, 0);
  EXPECT_EQ(plain.cached_prompt_tokens, 0);
  EXPECT_GT(cached.hit_blocks, 0);
  EXPECT_LE(cached.hit_blocks, cached.queried_blocks);
  EXPECT_EQ(cached.cached_prompt_tokens % 16, 0) << "hits are whole blocks";
  EXPECT_GT(cached.sharing_saving, 0.2) << "four 600-token prompts shared by every request";
  EXPECT_GT(cached.mean_running, plain.mean_running)
      << "shared blocks leave room for more requests";
  EXPECT_LT(cached.steps, plain.steps);
}

TEST(Replay, RefusesABudgetSmallerThanOneRequest) {
  const auto requests = make_workload({});
  int longest = 0;
  for (const Request& r : requests) longest = std::max(longest, r.total_tokens());
  PagedReplayOptions o;
  o.budget_tokens = longest - 20;
  expect_error([&] { replay_paged(requests, o); },
               {"is smaller than request", "no schedule can serve it; raise the budget"});
  expect_error([&] { replay_contiguous(requests, 1000, 2048, Reservation::kMaxLength); },
               "the KV budget of 1000 tokens is smaller than one request's max length region "
               "(2048 tokens");
  o.budget_tokens = 16384;
  o.block_size = 0;
  expect_error([&] { replay_paged(requests, o); }, "block size must be >= 1 token, got 0");
  expect_error([&] { replay_contiguous(requests, 16384, 100, Reservation::kExact); },
               "longer than max_len 100");
}

// Review of issue 19: a budget of 2^32 + 1 blocks passed the fit check in int64, then became 1
// block in the BlockManager's int; nothing was ever admitted and the replay never ended.
TEST(Replay, RefusesMoreBlocksThanAnIntCountsInsteadOfRunningForever) {
  const auto requests = make_workload({.requests = 3});
  PagedReplayOptions o;
  o.budget_tokens = 4294967297;  // 2^32 + 1
  o.block_size = 1;
  expect_error([&] { replay_paged(requests, o); },
               "replay_paged: the KV budget of 4294967297 tokens is 4294967297 blocks of 1, more "
               "than an int counts (2147483647); use a smaller budget or larger blocks");
  o.block_size = 2;  // 2^31 blocks: one more than an int holds
  expect_error([&] { replay_paged(requests, o); }, "is 2147483648 blocks of 2");
}

// Review of issue 19: `kv --requests 10 --budget-tokens 100000` had no step with a request
// waiting, so every "under load" mean was 0 and the stage printed paged / contiguous = "nanx".
TEST(Replay, SaysWhenNoRequestEverWaitedInsteadOfARatioOfZeros) {
  const auto requests = make_workload({.requests = 10});
  PagedReplayOptions roomy;
  roomy.budget_tokens = 100000;
  const std::vector<ReplayResult> idle = {
      replay_contiguous(requests, 100000, 2048, Reservation::kMaxLength),
      replay_paged(requests, roomy)};
  EXPECT_EQ(idle[0].steps_under_load, 0) << "48 max-length regions: all 10 fit";
  EXPECT_EQ(idle[0].mean_running, 0) << "the mean over no steps";
  const std::string note = without_pressure(idle);
  EXPECT_NE(note.find("no memory pressure: no request ever waited in \"contiguous, max length\", "
                      "whose KV budget of 100000 tokens holds every request at once"),
            std::string::npos)
      << note;
  EXPECT_NE(note.find("use a smaller --budget-tokens or more --requests"), std::string::npos)
      << note;
  const auto busy = make_workload({});
  EXPECT_EQ(without_pressure({replay_paged(busy, {}),
                              replay_contiguous(busy, 16384, 2048, Reservation::kMaxLength)}),
            "")
      << "the chapter's default run is under load";
}

}  // namespace
}  // namespace book::kv
