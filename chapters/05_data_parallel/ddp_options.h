/// @file
/// What defines a data-parallel run: the one-device run it must reproduce (chapter 4's
/// TrainOptions), the rung of the ladder, the bucket size, the collective's algorithm, and the
/// faults a test may inject. Every rank must be given equal options (faults aside); the trainer
/// checks this with a fingerprint before it allocates anything.
#pragma once

#include <cstddef>
#include <cstdint>

#include "chapters/03_collectives/types.h"
#include "chapters/04_training_baseline/trainer.h"
#include "chapters/05_data_parallel/buckets.h"
#include "chapters/05_data_parallel/gradient_sync.h"

namespace book::ddp {

/// Delays and failures injected on purpose, for the bottleneck classifier's and the restart
/// driver's tests and the stage's demonstrations, and two deliberately wrong "optimisations" for
/// an experiment harness to catch (a later chapter's A/B stage runs them as broken candidates:
/// each changes the loss curve, never the speed by much). All off by default.
struct FaultInjection {
  double loader_delay_s = 0;        ///< every rank sleeps this long per micro-batch while loading
  double link_delay_s_per_mib = 0;  ///< sleep before each gradient collective, per MiB it moves
  int straggler_rank = -1;          ///< this rank computes straggler_delay_s longer per micro-batch
  double straggler_delay_s = 0;     ///< (a slow GPU, a thermally throttled one, a noisy neighbour)
  int fail_rank = -1;               ///< this rank throws at the start of step fail_step
  std::int64_t fail_step = -1;      ///< (1-based; a crashed process, a lost GPU)
  /// Gradient accumulation that forgets to divide by the number of micro-batches: every
  /// micro-batch's backward uses A× the loss scale run_step gives it, so the step's gradient is
  /// the sum of the A micro-batches' means, not their mean. Needs accumulation ≥ 2 (at 1 it
  /// changes nothing). Under AdamW and clipping this bug is quiet: clipping undoes a common
  /// factor and Adam divides by the gradient's own scale, so only the steps where clipping (or
  /// Adam's ε) treat the two scales differently show it.
  bool skip_accumulation_mean = false;
  /// An all-reduce that skips the last bucket (the last launched: the start of the flat buffer,
  /// the embeddings): those gradients stay each rank's own, the replicas drift apart. Needs an
  /// overlapped rung (buckets or no-sync) and at least two buckets.
  bool skip_last_bucket = false;
};

/// One data-parallel run, as every rank sees it.
struct DdpOptions {
  /// The one-device run this reproduces: the model, the task, the schedule, the precision and the
  /// seed. Its `micro_batch` is the *global* micro-batch, shared by the N ranks (each runs
  /// micro_batch / N sequences), and `accumulation` micro-batches make one optimizer step, so a
  /// step sees micro_batch × accumulation sequences, exactly chapter 4's Trainer(train).
  train::TrainOptions train;
  Rung rung = Rung::kNoSync;                           ///< how gradients are synchronised
  std::size_t bucket_bytes = kPyTorchBucketBytes;      ///< bucket cap (rungs 3 and 4)
  coll::Algorithm algorithm = coll::Algorithm::kRing;  ///< of every gradient all-reduce
  /// 0: every gradient all-reduce is one all-reduce over all ranks. g ≥ 1: each is a
  /// hierarchical_all_reduce (hierarchical.h) over nodes of g consecutive ranks: reduce-scatter
  /// inside the node, all-reduce of 1/g across nodes, all-gather inside the node. The same mean,
  /// summed in another order: equal to the flat sync within rounding, not bit for bit.
  int hierarchical_ranks_per_node = 0;
  FaultInjection faults;                               ///< off by default
};

/// `options` with the task's vocabulary and context filled in (as chapter 4's Trainer does), after
/// checking everything a run of `world_size` ranks needs: the global micro-batch divisible by the
/// ranks, a bucket size of at least one byte, nodes of a hierarchical sync that divide the ranks, a training precision, a valid schedule. Throws
/// book::Error saying which value is wrong and what would do.
DdpOptions resolve(const DdpOptions& options, int world_size);

/// FNV-1a of every field that every rank must agree on (all but the faults): two ranks with
/// different fingerprints would train different models, or deadlock on different collectives.
std::uint64_t fingerprint(const DdpOptions& options);

}  // namespace book::ddp
