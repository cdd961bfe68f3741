// The bucket plan's scaffolding: argument checks around the exercise assign_buckets
// (solutions/05_data_parallel/buckets.cc), and a printable description.
#include "chapters/05_data_parallel/buckets.h"

#include <algorithm>
#include <sstream>

#include "common/check.h"

namespace book::ddp {

std::vector<FlatRange> plan_buckets(std::span<const FlatRange> tensors, std::size_t bucket_bytes,
                                    std::size_t element_bytes) {
  BOOK_CHECK(bucket_bytes > 0,
             "bucket size 0 bytes: a bucket must hold at least one element; "
             "PyTorch's default is 25 MiB (bucket_cap_mb=25)");
  BOOK_CHECK(element_bytes > 0, "buckets: the element size must be positive, got 0 bytes");
  BOOK_CHECK(!tensors.empty(), "buckets: there are no tensors to put in buckets");
  std::size_t expected_begin = 0;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    BOOK_CHECK(tensors[i].begin == expected_begin && tensors[i].end > tensors[i].begin,
               "buckets: tensor " << i << " is [" << tensors[i].begin << ", " << tensors[i].end
                                  << "), but the tensors must tile the flat buffer in order with "
                                     "no gaps and none empty (it should start at "
                                  << expected_begin << ")");
    expected_begin = tensors[i].end;
  }
  return assign_buckets(tensors, std::max<std::size_t>(1, bucket_bytes / element_bytes));
}

std::string describe(std::span<const FlatRange> ranges) {
  std::ostringstream out;
  out << ranges.size() << (ranges.size() == 1 ? " bucket:" : " buckets:");
  for (const FlatRange& r : ranges) out << " [" << r.begin << ", " << r.end << ")";
  return out.str();
}

}  // namespace book::ddp
