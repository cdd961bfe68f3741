// The reducer's scaffolding: construction, passes, the hook. mark_ready and finish, the exercise
// ddp.overlapped_all_reduce, are in solutions/05_data_parallel/reducer.cc.
#include "chapters/05_data_parallel/reducer.h"

#include "common/check.h"

namespace book::ddp {

BucketReducer::BucketReducer(std::vector<FlatRange> buckets, LaunchBucket launch)
    : buckets_(std::move(buckets)), launch_(std::move(launch)), ready_(buckets_.size(), 0) {
  BOOK_CHECK(!buckets_.empty(), "BucketReducer: there are no buckets; plan them with plan_buckets");
  BOOK_CHECK(launch_, "BucketReducer: the launch function is empty");
  for (std::size_t i = 0; i < buckets_.size(); ++i) {
    const bool tiles = buckets_[i].end > buckets_[i].begin &&
                       (i + 1 == buckets_.size() ? buckets_[i].begin == 0
                                                 : buckets_[i + 1].end == buckets_[i].begin);
    BOOK_CHECK(tiles, "BucketReducer: " << describe(buckets_)
                                        << " do not tile a buffer from its end down to 0 (bucket "
                                        << i << " is the first out of place)");
  }
}

void BucketReducer::begin_pass() {
  BOOK_CHECK(handles_.empty(), "BucketReducer: a new pass began while "
                                   << handles_.size()
                                   << " launched buckets were not waited for: call finish()");
  std::fill(ready_.begin(), ready_.end(), 0);
  next_ = 0;
}

std::function<void(std::size_t, std::size_t)> BucketReducer::hook() {
  return [this](std::size_t begin, std::size_t end) { mark_ready(begin, end); };
}

}  // namespace book::ddp
