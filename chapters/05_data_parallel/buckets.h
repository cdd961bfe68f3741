/// @file
/// Gradient buckets: the flat gradient buffer cut into a few large pieces, each all-reduced as
/// one collective. One collective per tensor pays the latency α hundreds of times (a GPT has
/// ~12 tensors per layer); one collective for everything cannot start before the whole backward
/// pass is done. Buckets sit between: few enough to amortise α, small enough that the first can
/// start while backward is still running.
///
/// The rule is PyTorch DDP's (Li et al., "PyTorch Distributed: Experiences on Accelerating Data
/// Parallel Training", VLDB 2020, §3.2.3; `bucket_cap_mb`, 25 MiB by default): walk the tensors in
/// the reverse of their order in the buffer — the order backward finishes them — adding each
/// whole tensor to the current bucket and closing the bucket once it holds at least the cap.
/// Tensors are never split, so a bucket exceeds the cap by less than one tensor, and a tensor
/// larger than the cap is a bucket by itself. (PyTorch also makes its first bucket smaller, 1 MiB,
/// so communication starts sooner; this book keeps one cap.)
///
/// Ranges are in elements of the flat buffer (chapter 4's ParameterLayout), so a bucket is
/// contiguous and is all-reduced in place, with no copy into a staging buffer.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace book::ddp {

/// Elements [begin, end) of a flat buffer: a tensor, a bucket, a layer's gradients.
struct FlatRange {
  std::size_t begin = 0;  ///< first element
  std::size_t end = 0;    ///< one past the last element
  /// end − begin.
  std::size_t size() const { return end - begin; }
  /// Equal ranges.
  bool operator==(const FlatRange&) const = default;
};

/// PyTorch DDP's default bucket cap, 25 MiB (`bucket_cap_mb=25`).
inline constexpr std::size_t kPyTorchBucketBytes = std::size_t{25} << 20;

/// Exercise ddp.bucket_assignment: cut the buffer into buckets by PyTorch's rule (the file
/// comment). `tensors` lists the tensors in buffer order; they tile [0, total) with no gaps and
/// none is empty. Walk them from the last to the first, adding each to the current bucket; close
/// the bucket as soon as it holds ≥ `cap_elements` elements (≥ 1); what is left at the end is the
/// last bucket. Returns the buckets in the order they are filled (and become ready): bucket 0
/// ends at `total`, the last starts at 0.
/// \exercise{ddp.bucket_assignment}
std::vector<FlatRange> assign_buckets(std::span<const FlatRange> tensors, std::size_t cap_elements);

/// The checked entry point: refuses a bucket size of 0 bytes, an element size of 0, and tensors
/// that do not tile [0, total) in order, each with a message saying what to do; then calls
/// assign_buckets with a cap of max(1, bucket_bytes / element_bytes) elements.
std::vector<FlatRange> plan_buckets(std::span<const FlatRange> tensors, std::size_t bucket_bytes,
                                    std::size_t element_bytes);

/// "3 buckets: [4096, 8192) [1024, 4096) [0, 1024)", for messages and the stage.
std::string describe(std::span<const FlatRange> ranges);

}  // namespace book::ddp
