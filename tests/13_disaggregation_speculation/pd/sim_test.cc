// The simulated clock's bookkeeping (no model runs): one colocated replica is chapter 11's
// simulator itself, the links' busy time is the sum of the transfers' formula, every request
// finishes after its first token, and a slower link never makes a request finish earlier.
#include <gtest/gtest.h>

#include "chapters/13_disaggregation_speculation/pd/pd_sim.h"

namespace book::pd {
namespace {

TEST(PdSim, OneColocatedReplicaIsChapter11sSimulator) {
  const auto requests = fixed_prompt_workload(60, 300, 20, 80, 4.0, 3);
  SimDeployment d;
  d.colocated = true;
  d.decode_workers = 1;
  const SimOutcome got = simulate_deployment(requests, d);
  const serve::SimResult want = serve::simulate_continuous(requests, d.replica, d.cost);
  for (std::size_t i = 0; i < requests.size(); ++i) {
    EXPECT_EQ(got.timings[i].first_token_ms, want.timings[i].first_token_ms) << i;
    EXPECT_EQ(got.timings[i].finish_ms, want.timings[i].finish_ms) << i;
  }
}

TEST(PdSim, LinksCarryTheFormulasBytesAndSlowerLinksNeverHelp) {
  const auto requests = fixed_prompt_workload(80, 512, 10, 60, 6.0, 4);
  SimDeployment fast;
  SimDeployment slow = fast;
  slow.link = slow_link();
  const SimOutcome a = simulate_deployment(requests, fast);
  const SimOutcome b = simulate_deployment(requests, slow);
  double want = 0;
  for (const auto& r : requests)
    if (r.output_tokens > 1) want += fast.link.transfer_ms(fast.kv_bytes_per_token * 512);
  EXPECT_NEAR(a.transfer_ms_total, want, 1e-6 * want);
  for (std::size_t i = 0; i < requests.size(); ++i) {
    EXPECT_GE(a.timings[i].finish_ms, a.timings[i].first_token_ms) << i;
    EXPECT_EQ(a.timings[i].first_token_ms, b.timings[i].first_token_ms)
        << i << ": the link comes after the first token";
    EXPECT_GE(b.timings[i].finish_ms + 1e-9, a.timings[i].finish_ms) << i;
  }
}

}  // namespace
}  // namespace book::pd
