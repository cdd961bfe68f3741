// Scaffolding: the α-β step-time model. Its formulas on numbers checked by hand, the overlap
// bound, and the trends it must show from 8 to 64 ranks.
#include <gtest/gtest.h>

#include "chapters/05_data_parallel/scaling_model.h"

namespace book::ddp {
namespace {

TEST(ScalingModel, RingAndHierarchicalFormulas) {
  const Link link{10e-6, 50e9};
  EXPECT_EQ(ring_all_reduce_seconds(1, 1e9, link), 0.0);
  // 2·7·10 µs + 2·7/8 · 1 GB / 50 GB/s = 140 µs + 35 ms.
  EXPECT_NEAR(ring_all_reduce_seconds(8, 1e9, link), 140e-6 + 0.035, 1e-12);
  const Link nvlink{5e-6, 450e9};
  // Inside 8-rank nodes: 14 α_intra + 1.75 S / B_intra; across 8 nodes: S/8 on the ring.
  const double expected = 14 * 5e-6 + 1.75 * 1e9 / 450e9 + 14 * 10e-6 + 1.75 * (1e9 / 8) / 50e9;
  EXPECT_NEAR(hierarchical_all_reduce_seconds(64, 8, 1e9, nvlink, link), expected, 1e-12);
  Cluster cluster{nvlink, link, 8, false};
  EXPECT_EQ(all_reduce_seconds(8, 1e9, cluster), ring_all_reduce_seconds(8, 1e9, nvlink))
      << "8 ranks fit in one node: NVLink only";
  EXPECT_EQ(all_reduce_seconds(64, 1e9, cluster), ring_all_reduce_seconds(64, 1e9, link))
      << "a flat ring across nodes runs at the slowest link's pace";
  cluster.hierarchical = true;
  EXPECT_LT(all_reduce_seconds(64, 1e9, cluster), ring_all_reduce_seconds(64, 1e9, link));
}

TEST(ScalingModel, OverlapHidesAllButWhatRunsPastBackward) {
  Workload w;
  w.gradient_bytes = 4e8;
  w.flops_per_sample = 1e12;
  w.global_batch = 256;
  w.flops_per_s = 1e14;
  w.buckets = 16;
  const Cluster cluster{{5e-6, 450e9}, {10e-6, 50e9}, 8, false};
  for (int n : {2, 8, 16, 64}) {
    const StepPrediction blocking = predict_step(w, cluster, n, false);
    const StepPrediction overlapped = predict_step(w, cluster, n, true);
    EXPECT_NEAR(blocking.step_s, blocking.compute_s + blocking.comm_s, 1e-12) << n;
    EXPECT_LE(overlapped.exposed_s, overlapped.comm_s) << n;
    EXPECT_GE(overlapped.exposed_s, overlapped.comm_s / w.buckets - 1e-12)
        << n << ": the last bucket can only start when backward ends";
    EXPECT_LE(overlapped.efficiency, 1.0) << n;
  }
  const StepPrediction one = predict_step(w, cluster, 1, true);
  EXPECT_EQ(one.comm_s, 0.0);
  EXPECT_NEAR(one.efficiency, 1.0, 1e-12);
}

TEST(ScalingModel, EightToSixtyFourAtAFixedBatchLosesEfficiency) {
  Workload w;  // 1.3B parameters, BF16 gradients, 512 sequences of 2048 tokens
  w.gradient_bytes = 2 * 1.3e9;
  w.flops_per_sample = 6 * 1.3e9 * 2048;
  w.global_batch = 512;
  w.flops_per_s = 400e12;
  w.buckets = 100;
  Cluster cluster{{5e-6, 450e9}, {10e-6, 50e9}, 8, false};
  const double at8 = predict_step(w, cluster, 8, true).efficiency;
  const double at64 = predict_step(w, cluster, 64, true).efficiency;
  EXPECT_LT(at64, at8) << "more ranks share the same batch: less compute to hide behind";
  cluster.hierarchical = true;
  EXPECT_GT(predict_step(w, cluster, 64, true).efficiency, at64)
      << "hierarchical all-reduce crosses nodes with 1/8 of the data";
  w.global_batch *= 8;  // the batch grows with N (weak scaling)
  cluster.hierarchical = false;
  EXPECT_GT(predict_step(w, cluster, 64, true).efficiency, at64);
}

TEST(ScalingModel, ReplicatedWorkIsAmdahlsSerialPart) {
  // 20 ms of divisible compute and 5 ms of optimizer on every rank, no communication cost.
  Workload w;
  w.flops_per_sample = 1;
  w.global_batch = 20;
  w.flops_per_s = 1000;  // 20 samples in 20 ms
  w.replicated_s = 0.005;
  const Cluster free{{0, 1e30}, {0, 1e30}, 8, false};
  const StepPrediction one = predict_step(w, free, 1, true), two = predict_step(w, free, 2, true);
  EXPECT_NEAR(one.step_s, 0.025, 1e-12);
  EXPECT_NEAR(one.efficiency, 1.0, 1e-12);
  EXPECT_NEAR(two.step_s, 0.015, 1e-12) << "10 ms of compute + the 5 ms every rank repeats";
  EXPECT_NEAR(two.efficiency, 0.025 / (2 * 0.015), 1e-12) << "1.67x on 2 ranks, not 2x";
}

TEST(ScalingModel, FitLinkRecoversAlphaAndBandwidth) {
  const Link truth{25e-6, 1.5e9};
  const double small = 4096, large = 16 << 20;
  const Link fit = fit_link(4, small, ring_all_reduce_seconds(4, small, truth), large,
                            ring_all_reduce_seconds(4, large, truth));
  EXPECT_NEAR(fit.alpha_s, truth.alpha_s, 1e-12);
  EXPECT_NEAR(fit.bytes_per_s, truth.bytes_per_s, 1e-3);
}

}  // namespace
}  // namespace book::ddp
