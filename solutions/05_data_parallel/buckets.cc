// Reference for ddp.bucket_assignment: PyTorch's rule, tensors whole, from the back of the buffer.
#include "chapters/05_data_parallel/buckets.h"

namespace book::ddp {

//! [assign_buckets]
std::vector<FlatRange> assign_buckets(std::span<const FlatRange> tensors,
                                      std::size_t cap_elements) {
  std::vector<FlatRange> buckets;
  FlatRange open{tensors.back().end, tensors.back().end};  // empty, at the end of the buffer
  for (auto tensor = tensors.rbegin(); tensor != tensors.rend(); ++tensor) {
    open.begin = tensor->begin;  // the bucket grows downwards, one whole tensor at a time
    if (open.size() >= cap_elements) {
      buckets.push_back(open);
      open = {tensor->begin, tensor->begin};
    }
  }
  if (open.size() > 0) buckets.push_back(open);
  return buckets;
}
//! [assign_buckets]

}  // namespace book::ddp
