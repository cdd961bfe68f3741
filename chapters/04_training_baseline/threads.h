/// @file
/// How the training step uses more than one core: each layer's work is split into contiguous
/// ranges, one per thread, on the threads chapter 1's sgemm keeps
/// (book::gemm::run_on_gemm_threads), so the layers and the GEMMs between them share one set of
/// threads.
///
/// The one knob is sgemm's thread count (book::gemm::SgemmThreads, the train stage's
/// --threads, the bench's threads argument): 1 keeps the whole step on the calling thread, as
/// the parallel chapters' ranks want. Each layer splits its work so that every output element is
/// computed by one thread in the same order as on one thread (a sum over rows is split by
/// columns, never by rows), so a step's results are bit-identical whatever the thread count.
#pragma once

#include <cstddef>
#include <functional>

namespace book::train {

/// The threads a step's layers split their work over: book::gemm::sgemm_thread_count().
int step_threads();

/// Calls fn(begin, end) on contiguous ranges that tile [0, count), at most one range per thread
/// and each at least `grain` items long (so a small layer stays on the calling thread, where
/// waking another costs more than it saves), at the same time on up to step_threads() threads.
/// One range (fn(0, count) on the calling thread) when that leaves fewer than two. `fn` must
/// compute each item the same way whatever range it is in; ranges never share an output.
void parallel_for(std::size_t count, std::size_t grain,
                  const std::function<void(std::size_t begin, std::size_t end)>& fn);

/// The grain of parallel_for for items of `work_per_item` units (floats touched, multiply-adds):
/// enough items that one range is worth about kParallelWork units.
std::size_t grain_for(std::size_t work_per_item);

/// The work (in floats touched or multiply-adds) a range must have for another thread to pay for
/// waking it: a few microseconds of work.
inline constexpr std::size_t kParallelWork = 16384;

}  // namespace book::train
