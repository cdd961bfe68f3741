/// @file
/// Is a data-parallel job bound by compute, communication or data, or is one rank holding the
/// others back? The answer is in each rank's timeline: where its step's time went. This file
/// reads per-rank spans (the StepTimes a DdpTrainer records, averaged over steps) and names the
/// bottleneck by four rules, applied in this order:
///
/// 1. **straggler**: one rank's own work (data + compute) is ≥ 1.25× the median rank's, and by at
///    least 10% of the median step (so jitter in a tiny compute time is not a straggler), and it
///    waits least: the others wait for it at every all-reduce. (A straggler also makes the others'
///    communication wait look long, so this rule comes first.)
/// 2. **data**: the median rank spends ≥ 20% of its step loading data. A healthy loader
///    prefetches on other threads and costs the step almost nothing.
/// 3. **communication**: the median rank waits on gradient collectives (exposed communication)
///    for ≥ 25% of its step: backward no longer hides them.
/// 4. **compute** otherwise: the step is forward, backward and the optimizer, as it should be.
///
/// The thresholds are rules of thumb, not laws; the diagnosis prints the shares it used, so a
/// reader can see how close a call was.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "chapters/05_data_parallel/ddp_trainer.h"

namespace book::ddp {

/// What bounds the step.
enum class Bottleneck {
  kCompute,        ///< forward, backward, optimizer dominate: add ranks or faster kernels
  kCommunication,  ///< exposed gradient all-reduce: bigger buckets, overlap, faster links, less N
  kData,           ///< the loader: prefetch, more workers, cheaper decoding
  kStraggler,      ///< one slow rank: find and replace or rebalance it
};

/// "compute", "communication", "data" or "straggler".
const char* bottleneck_name(Bottleneck b);

/// One rank's average step, in seconds.
struct RankSpans {
  double data = 0;       ///< loading
  double compute = 0;    ///< forward + backward (+ the optimizer)
  double comm_wait = 0;  ///< blocked on gradient collectives (exposed)
  double step = 0;       ///< the whole step
};

/// The classifier's answer.
struct Diagnosis {
  Bottleneck kind = Bottleneck::kCompute;  ///< the bottleneck
  int straggler = -1;                      ///< the slow rank (kStraggler only)
  double data_share = 0;                   ///< median rank's data / step
  double comm_share = 0;                   ///< median rank's comm_wait / step
  double compute_share = 0;                ///< median rank's compute / step
  double slowest_over_median = 0;          ///< slowest rank's own work / the median rank's
  std::string reason;                      ///< one line with the numbers behind the call
};

/// Rule 1: the slowest rank's own work over the median rank's.
inline constexpr double kStragglerRatio = 1.25;
/// Rule 1: how much slower, as a share of the median rank's step.
inline constexpr double kStragglerExcess = 0.10;
/// Rule 2: the median rank's data loading over its step.
inline constexpr double kDataShare = 0.20;
/// Rule 3: the median rank's exposed communication over its step.
inline constexpr double kCommShare = 0.25;

/// Applies the four rules to one entry per rank. Throws book::Error for no ranks, a step time
/// that is not positive and finite, or a data, compute or comm_wait time outside [0, step].
Diagnosis classify_bottleneck(std::span<const RankSpans> ranks);

/// The mean over `steps` of one rank's StepTimes, as RankSpans (optimizer time counts as compute).
RankSpans average_spans(std::span<const StepTimes> steps);

}  // namespace book::ddp
