#include "chapters/04_training_baseline/threads.h"

#include <algorithm>

#include "chapters/01_gemm_cpu/sgemm.h"

namespace book::train {

int step_threads() { return book::gemm::sgemm_thread_count(); }

std::size_t grain_for(std::size_t work_per_item) {
  return std::max<std::size_t>(1, kParallelWork / std::max<std::size_t>(work_per_item, 1));
}

//! [parallel_for]
void parallel_for(std::size_t count, std::size_t grain,
                  const std::function<void(std::size_t begin, std::size_t end)>& fn) {
  const std::size_t most = count / std::max<std::size_t>(grain, 1);
  const int threads = static_cast<int>(std::min<std::size_t>(step_threads(), most));
  if (threads < 2) {
    if (count > 0) fn(0, count);
    return;
  }
  book::gemm::run_on_gemm_threads(threads, [&](int t) {
    const std::size_t begin = count * t / threads, end = count * (t + 1) / threads;
    if (begin < end) fn(begin, end);
  });
}
//! [parallel_for]

}  // namespace book::train
