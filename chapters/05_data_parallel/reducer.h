/// @file
/// Overlap: start each bucket's all-reduce the moment its gradients are final, while backward
/// goes on with the layers below. This is the heart of PyTorch's DDP Reducer (Li et al., VLDB
/// 2020, §3.2.3–3.2.4), without autograd: chapter 4's backward pass calls a GradientReadyHook with
/// the flat range of each layer as it finishes (head first, embeddings last), and the reducer
/// counts, per bucket, how many of its elements are ready.
///
/// Every rank must start the same collectives in the same order (chapter 3's AsyncCommunicator
/// runs them in start order), so buckets are launched strictly in index order: a bucket that
/// completes before an earlier one waits for it. With buckets cut in reverse buffer order
/// (buckets.h) and ranges reported in reverse order, they complete in index order anyway.
///
/// Reused by chapter 6 (a launch that reduce-scatters instead) and chapter 8 (the DP group of a
/// 3D grid): the reducer only counts and launches; what a launch does is the caller's.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "chapters/03_collectives/async.h"
#include "chapters/05_data_parallel/buckets.h"

namespace book::ddp {

/// Starts the collective of bucket `index` (elements `bucket` of the gradient buffer) and returns
/// its handle, e.g. `async.all_reduce(buffer.slice(...), coll::ReduceOp::kAvg)`.
using LaunchBucket =
    std::function<coll::CollectiveHandle(std::size_t index, const FlatRange& bucket)>;

/// Counts ready gradient elements per bucket and launches each bucket once it is complete.
/// One pass = one backward pass whose gradients are to be reduced:
/// `begin_pass(); model.backward(acts, scale, reducer.hook()); reducer.finish();`.
class BucketReducer {
 public:
  /// Buckets as plan_buckets returns them (bucket 0 at the end of the buffer). `launch` is called
  /// once per bucket per pass, in index order. Throws book::Error if there are no buckets, they do
  /// not tile a buffer from its end to 0, or `launch` is empty.
  BucketReducer(std::vector<FlatRange> buckets, LaunchBucket launch);

  /// Starts a pass: no element is ready, no bucket launched. Throws book::Error if the previous
  /// pass launched buckets that finish() has not waited for.
  void begin_pass();

  /// Exercise ddp.overlapped_all_reduce (1 of 2): elements [begin, end) of the gradient buffer are
  /// final for this pass. Add the size of its overlap with every bucket to that bucket's count
  /// (`ready_`); a count that would exceed its bucket's size means a range was reported twice:
  /// throw book::Error saying which bucket, before counting anything in it. Then launch, in index
  /// order from `next_`, every bucket whose count is complete: `handles_.push_back(launch_(next_,
  /// buckets_[next_]))`, `++next_`; stop at the first incomplete one.
  /// \exercise{ddp.overlapped_all_reduce}
  void mark_ready(std::size_t begin, std::size_t end);

  /// Exercise ddp.overlapped_all_reduce (2 of 2): the end of the pass. If a bucket was never
  /// launched, throw book::Error naming it and how many of its elements were ready (a layer's
  /// gradients were never reported). Otherwise wait for every launched bucket, in order, and clear
  /// `handles_`; a failed collective's error comes through.
  void finish();

  /// mark_ready as chapter 4's GradientReadyHook, to pass to backward().
  std::function<void(std::size_t, std::size_t)> hook();

  const std::vector<FlatRange>& buckets() const { return buckets_; }  ///< The buckets.
  std::size_t launched() const { return next_; }  ///< Buckets launched in this pass.
  /// Elements of bucket `index` reported ready in this pass.
  std::size_t ready(std::size_t index) const { return ready_.at(index); }

 private:
  std::vector<FlatRange> buckets_;               // bucket 0 ends at the end of the buffer
  LaunchBucket launch_;                          // starts one bucket's collective
  std::vector<std::size_t> ready_;               // per bucket: elements ready in this pass
  std::size_t next_ = 0;                         // the next bucket to launch
  std::vector<coll::CollectiveHandle> handles_;  // the launched buckets, in order
};

}  // namespace book::ddp
