// Exercise ddp.overlapped_all_reduce — write BucketReducer::mark_ready and BucketReducer::finish
// (declared in chapters/05_data_parallel/reducer.h; the members they use are listed there):
//   mark_ready(begin, end): for every bucket, add the size of its overlap with [begin, end) to
//     ready_[i] (throw book::Error if that would exceed the bucket's size: reported twice); then
//     while next_ < buckets_.size() and bucket next_ is complete, handles_.push_back(
//     launch_(next_, buckets_[next_])) and ++next_ — in index order, never out of order.
//   finish(): throw book::Error naming bucket next_ if some bucket was never launched; else wait()
//     on every handle in order and leave handles_ empty.
// Graded by tests/05_data_parallel/reducer_test.cc (and ddp_test):
//   bazel test --config=exercises //tests/05_data_parallel:reducer_test
#include "chapters/05_data_parallel/reducer.h"
#include "common/check.h"

namespace book::ddp {

void BucketReducer::mark_ready(std::size_t begin, std::size_t end) {
  (void)begin, (void)end;
  BOOK_NOT_IMPLEMENTED("ddp.overlapped_all_reduce", "exercises/05_data_parallel/reducer.cc",
                       "chapters/05_data_parallel/README.md, section Overlap");
}

void BucketReducer::finish() {
  BOOK_NOT_IMPLEMENTED("ddp.overlapped_all_reduce", "exercises/05_data_parallel/reducer.cc",
                       "chapters/05_data_parallel/README.md, section Overlap");
}

}  // namespace book::ddp
