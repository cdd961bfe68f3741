/// @file
/// A simulator of PyTorch's CUDA caching allocator (c10/cuda/CUDACachingAllocator.cpp), to see
/// the gap between the bytes a training step asks for and the bytes the device must reserve.
///
/// The rules simulated, with PyTorch's constants: requests are rounded up to a multiple of 512
/// bytes; requests up to 1 MiB are served from the small pool, whose segments are 2 MiB; larger
/// ones from the large pool, whose segments are 20 MiB for requests under 10 MiB and the request
/// rounded up to 2 MiB otherwise. A request takes the best-fitting cached free block of its pool
/// (the smallest that fits, then the lowest address); the block is split when the rest is at
/// least 512 bytes (small pool) or more than 1 MiB (large pool); a freed block merges with free
/// neighbours of its segment and stays cached: nothing returns to the device unless
/// empty_cache() is called. With expandable segments (PYTORCH_CUDA_ALLOC_CONF=
/// expandable_segments:True) each pool has one segment that grows by 2 MiB pages at its end
/// instead of new segments.
///
/// Three more of its rules, each off unless asked for: <b>streams</b> (a segment belongs to the
/// stream that asked the device for it, and only that stream's requests take its blocks; a block
/// another stream used, record_stream(), is not reusable after its free until synchronize(),
/// PyTorch's cudaEvent wait); a <b>device limit</b> with the <b>retry after an out-of-memory</b>
/// (when the device refuses a segment, synchronise, release every cached segment, and ask again;
/// only then fail, with the bytes in the message); and the <b>garbage-collection threshold</b>
/// (PYTORCH_CUDA_ALLOC_CONF=garbage_collection_threshold:t: before asking the device for more
/// when reserved would pass t × the limit, release cached free segments, the longest-unused
/// first, until it would not — PyTorch picks blocks by an age count, this by the order segments
/// became free). Not simulated: max_split_size_mb.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "common/memory.h"

namespace book::mem {

/// PyTorch's constants.
inline constexpr std::size_t kMinBlockSize = 512;        ///< every size is a multiple
inline constexpr std::size_t kSmallSize = 1 << 20;       ///< largest small-pool request
inline constexpr std::size_t kSmallBuffer = 2 << 20;     ///< small-pool segment
inline constexpr std::size_t kLargeBuffer = 20 << 20;    ///< segment for requests < 10 MiB
inline constexpr std::size_t kMinLargeAlloc = 10 << 20;  ///< at or above: own rounded segment
inline constexpr std::size_t kRoundLarge = 2 << 20;      ///< large segments' (and pages') unit
/// The simulator's own limit, not PyTorch's: a segment's offsets take 40 bits of an address, so
/// one request (and one expandable segment) is at most 1 TiB, more than any device holds.
inline constexpr std::size_t kMaxSegmentBytes = std::size_t{1} << 40;

/// The allocator's variant.
struct AllocatorOptions {
  bool expandable_segments =
      false;  ///< one growing segment per pool (and stream) instead of new ones
  /// The device's memory in bytes (0: unlimited). A segment past it is refused, the cache freed
  /// and the request retried once; then malloc throws book::Error (the out-of-memory).
  std::size_t device_limit = 0;
  /// Garbage-collection threshold in (0, 1) of device_limit (0: off; needs a limit).
  double garbage_collection_threshold = 0;
};

/// Bytes at one moment: what the program asked for, what the allocator handed out (rounded,
/// unsplit remainders included), what it holds from the device.
struct AllocatorBytes {
  std::size_t requested = 0;  ///< the sum of live requests as asked
  std::size_t allocated = 0;  ///< the sum of live blocks' sizes
  std::size_t reserved = 0;   ///< the sum of segments' sizes
};

/// The caching allocator: malloc hands out a handle (a simulated device address), free takes it.
class CachingAllocator {
 public:
  /// An empty allocator: nothing reserved.
  explicit CachingAllocator(AllocatorOptions options = {});

  /// Hands out a block of at least `bytes` (in [1, kMaxSegmentBytes]; book::Error otherwise) for
  /// `stream` (>= 0) and
  /// returns its address. book::Error "out of memory" when the device limit refuses it even after
  /// the cache was released.
  std::uint64_t malloc(std::size_t bytes, int stream = 0);
  /// Returns the block at `address` to the cache (pending until synchronize() when another stream
  /// used it); book::Error when no live block starts there.
  void free(std::uint64_t address);
  /// Marks the live block at `address` as used by `stream` too (torch.Tensor.record_stream).
  void record_stream(std::uint64_t address, int stream);
  /// Waits for every stream: pending freed blocks become reusable (and merge with free
  /// neighbours).
  void synchronize();
  /// Returns every segment with no live block to the device (torch.cuda.empty_cache()); an
  /// expandable segment gives back its free pages at the end.
  void empty_cache();

  AllocatorBytes bytes() const { return bytes_; }             ///< now
  std::size_t segments() const;                               ///< segments held now
  std::size_t device_calls() const { return device_calls_; }  ///< cudaMalloc or page maps so far
  std::size_t retries() const { return retries_; }      ///< out-of-memory retries (cache freed)
  std::size_t collected() const { return collected_; }  ///< segments the threshold released
  std::size_t pending() const;                          ///< freed blocks waiting for synchronize()
  /// Throws book::Error unless: every segment is tiled by its blocks without gaps or overlaps, no
  /// two neighbouring blocks are both free, the blocks' sums equal bytes(), and allocated ≤
  /// reserved.
  void check_invariants() const;

 private:
  struct Block {
    std::size_t size = 0, requested = 0;
    bool live = false;
    bool pending = false;       // freed, but another stream may still use it
    bool other_stream = false;  // record_stream named a stream besides the owner
  };
  struct Segment {
    bool small = false;
    std::size_t size = 0;
    std::map<std::size_t, Block> blocks;  // offset -> block
    int stream = 0;                       // the stream whose requests it serves
    std::size_t free_since = 0;           // when it last became wholly free (gc's age)
  };
  static std::uint64_t address_of(std::size_t segment, std::size_t offset);
  std::size_t grow(bool small, std::size_t size, int stream);  // false: over the device limit
  bool try_grow(bool small, std::size_t size, int stream);
  void collect_garbage(std::size_t incoming);
  void release_free_segment(Segment& s);
  void coalesce(std::size_t segment, std::size_t offset);
  void split_and_take(std::size_t segment, std::size_t offset, std::size_t size,
                      std::size_t requested);

  AllocatorOptions options_;
  std::vector<Segment> segments_;  // index in the address's high bits; empty when released
  AllocatorBytes bytes_;
  std::size_t device_calls_ = 0, retries_ = 0, collected_ = 0, frees_ = 0;
};

/// One point of a replay: the bytes after event `event`.
struct AllocatorSample {
  std::size_t event = 0;  ///< index in the trace
  AllocatorBytes bytes;   ///< after it
};

/// What a replay saw.
struct ReplayReport {
  std::vector<AllocatorSample> timeline;  ///< after every event
  AllocatorBytes at_peak_reserved;        ///< the first moment reserved was largest
  std::size_t peak_requested = 0;         ///< the most bytes live as asked
  std::size_t peak_allocated = 0;         ///< the most bytes in live blocks
  std::size_t segments = 0;               ///< segments at the end
  std::size_t device_calls = 0;           ///< cudaMalloc (or page-map) calls
  std::size_t mallocs = 0;                ///< requests replayed
  /// 1 − allocated/reserved at the reserved peak: the share of the device memory held but unused.
  double fragmentation_at_peak() const;
};

/// Replays a tracker's event log (MemoryTracker::record_events) through the allocator: every
/// allocation a malloc, every release the free of the live block at that address (zero-byte
/// buffers skipped). book::Error when a release matches no live allocation.
ReplayReport replay(const std::vector<MemoryEvent>& events, AllocatorOptions options = {});

}  // namespace book::mem
