// Exercise ddp.bucket_assignment — write assign_buckets (declared in
// chapters/05_data_parallel/buckets.h): walk `tensors` from the last to the first, growing the
// open bucket downwards by one whole tensor at a time; as soon as it holds >= cap_elements
// elements, close it (append it to the result) and open an empty one below it. Append what is
// left at the end, if anything. Bucket 0 then ends at the end of the buffer, the last starts at 0.
// Graded by tests/05_data_parallel/buckets_test.cc:
//   bazel test --config=exercises //tests/05_data_parallel:buckets_test
#include "chapters/05_data_parallel/buckets.h"
#include "common/check.h"

namespace book::ddp {

std::vector<FlatRange> assign_buckets(std::span<const FlatRange> tensors,
                                      std::size_t cap_elements) {
  (void)tensors, (void)cap_elements;
  BOOK_NOT_IMPLEMENTED("ddp.bucket_assignment", "exercises/05_data_parallel/buckets.cc",
                       "chapters/05_data_parallel/README.md, section Buckets");
}

}  // namespace book::ddp
