// Scaffolding: the bottleneck classifier. Its four rules on spans written by hand, then on real
// runs of 4 thread ranks with delays injected: a slow loader (data), a slow link (communication),
// one straggler (named). Delays are tens of milliseconds against a step of a few, so the call
// does not depend on the machine's load. Links the reference exercise bodies.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "chapters/03_collectives/threads.h"
#include "chapters/05_data_parallel/bottleneck.h"
#include "chapters/05_data_parallel/ddp_trainer.h"
#include "tests/05_data_parallel/tiny_run.h"

namespace book::ddp {
namespace {

// Four ranks with these seconds of data, compute and exposed communication per step.
std::vector<RankSpans> spans(std::vector<std::vector<double>> per_rank) {
  std::vector<RankSpans> out;
  for (const auto& p : per_rank) out.push_back({p[0], p[1], p[2], p[0] + p[1] + p[2]});
  return out;
}

TEST(Bottleneck, TheFourRulesOnHandWrittenSpans) {
  auto d = classify_bottleneck(spans(
      {{0.001, 0.09, 0.01}, {0.001, 0.09, 0.012}, {0.001, 0.092, 0.01}, {0.001, 0.09, 0.011}}));
  EXPECT_EQ(d.kind, Bottleneck::kCompute) << d.reason;
  d = classify_bottleneck(
      spans({{0.04, 0.09, 0.01}, {0.04, 0.09, 0.01}, {0.041, 0.09, 0.01}, {0.04, 0.09, 0.01}}));
  EXPECT_EQ(d.kind, Bottleneck::kData) << d.reason;
  EXPECT_NEAR(d.data_share, 0.04 / 0.14, 1e-9);
  d = classify_bottleneck(
      spans({{0.001, 0.05, 0.05}, {0.001, 0.05, 0.05}, {0.001, 0.05, 0.05}, {0.001, 0.05, 0.05}}));
  EXPECT_EQ(d.kind, Bottleneck::kCommunication) << d.reason;
  // Rank 2 computes twice as long; the others wait for it at the all-reduce. Their long waits
  // would read as a communication bottleneck if the straggler rule did not come first.
  d = classify_bottleneck(spans(
      {{0.001, 0.05, 0.052}, {0.001, 0.05, 0.05}, {0.001, 0.1, 0.002}, {0.001, 0.05, 0.051}}));
  EXPECT_EQ(d.kind, Bottleneck::kStraggler) << d.reason;
  EXPECT_EQ(d.straggler, 2);
  EXPECT_NE(d.reason.find("rank 2 works"), std::string::npos) << d.reason;
  // A rank that is slow but also waits most is not the one the others wait for.
  d = classify_bottleneck(
      spans({{0.001, 0.05, 0.0}, {0.001, 0.05, 0.0}, {0.001, 0.1, 0.05}, {0.001, 0.05, 0.0}}));
  EXPECT_NE(d.kind, Bottleneck::kStraggler) << d.reason;
  EXPECT_EQ(classify_bottleneck(spans({{0.0, 0.1, 0.9}})).kind, Bottleneck::kCommunication)
      << "one rank cannot straggle";
}

// Four ranks of the tiny model, rung 4, `steps` steps with `faults`; every rank's mean spans
// over the steps after the first (which pays for first touches).
std::vector<RankSpans> measure(const FaultInjection& faults, int steps = 4) {
  DdpOptions options = testing::tiny_ddp_options(Rung::kNoSync, testing::tiny_train_options(1));
  options.faults = faults;
  std::vector<RankSpans> out(4);
  coll::run_ranks(4, [&](coll::Communicator& comm) {
    DdpTrainer trainer(comm, options);
    std::vector<StepTimes> times;
    for (int s = 0; s < steps; ++s) {
      trainer.step();
      if (s > 0) times.push_back(trainer.last_times());
    }
    out[comm.rank()] = average_spans(times);
  });
  return out;
}

//! [injected_delays]
TEST(Bottleneck, InjectedDelaysAreNamed) {
  FaultInjection slow_loader;
  slow_loader.loader_delay_s = 0.05;  // every rank, every micro-batch
  Diagnosis d = classify_bottleneck(measure(slow_loader));
  EXPECT_EQ(d.kind, Bottleneck::kData) << d.reason;

  FaultInjection slow_link;
  slow_link.link_delay_s_per_mib = 3.0;  // ~80 ms per step for the tiny model's 28 KiB
  d = classify_bottleneck(measure(slow_link));
  EXPECT_EQ(d.kind, Bottleneck::kCommunication) << d.reason;

  FaultInjection straggler;
  straggler.straggler_rank = 2;
  straggler.straggler_delay_s = 0.06;
  d = classify_bottleneck(measure(straggler));
  EXPECT_EQ(d.kind, Bottleneck::kStraggler) << d.reason;
  EXPECT_EQ(d.straggler, 2) << d.reason;
}
//! [injected_delays]

}  // namespace
}  // namespace book::ddp
