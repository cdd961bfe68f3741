// Reference for ddp.overlapped_all_reduce: count what is ready, launch in order, wait at the end.
#include <algorithm>

#include "chapters/05_data_parallel/reducer.h"
#include "common/check.h"

namespace book::ddp {

//! [mark_ready]
void BucketReducer::mark_ready(std::size_t begin, std::size_t end) {
  for (std::size_t i = 0; i < buckets_.size(); ++i) {
    const std::size_t lo = std::max(begin, buckets_[i].begin);
    const std::size_t hi = std::min(end, buckets_[i].end);
    if (lo >= hi) continue;
    BOOK_CHECK(ready_[i] + (hi - lo) <= buckets_[i].size(),
               "BucketReducer: bucket " << i << " [" << buckets_[i].begin << ", "
                                        << buckets_[i].end << ") would have "
                                        << ready_[i] + (hi - lo) << " of its "
                                        << buckets_[i].size()
                                        << " elements ready: a range was reported twice in one "
                                           "pass");
    ready_[i] += hi - lo;
  }
  // Launch in index order only: every rank must start the same collectives in the same order.
  while (next_ < buckets_.size() && ready_[next_] == buckets_[next_].size()) {
    handles_.push_back(launch_(next_, buckets_[next_]));
    ++next_;
  }
}
//! [mark_ready]

//! [finish]
void BucketReducer::finish() {
  BOOK_CHECK(next_ == buckets_.size(), "BucketReducer: bucket "
                                           << next_ << " [" << buckets_[next_].begin << ", "
                                           << buckets_[next_].end << ") was never launched: only "
                                           << ready_[next_] << " of its " << buckets_[next_].size()
                                           << " elements were reported ready (did backward report "
                                              "every layer to the hook?)");
  std::vector<coll::CollectiveHandle> handles;
  handles.swap(handles_);  // a failure below leaves the reducer ready for the next pass
  for (const coll::CollectiveHandle& handle : handles) handle.wait();
}
//! [finish]

}  // namespace book::ddp
