#include "chapters/01_gemm_cpu/engine/team.h"

#include <immintrin.h>

#include <chrono>

namespace book::gemm::engine {

//! [team]
void SpinBarrier::arrive_and_wait() {
  const unsigned phase = phase_.load(std::memory_order_acquire);
  if (left_.fetch_sub(1, std::memory_order_acq_rel) == 1) {  // the last to arrive opens it
    left_.store(count_, std::memory_order_relaxed);
    phase_.fetch_add(1, std::memory_order_release);
    phase_.notify_all();
    return;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(200);
  while (phase_.load(std::memory_order_acquire) == phase) {
    if (std::chrono::steady_clock::now() > deadline) {
      phase_.wait(phase, std::memory_order_acquire);  // sleep until the phase changes
    } else {
      _mm_pause();
    }
  }
}

void Team::run(int threads, const std::function<void(int)>& job) {
  if (threads == 1) return job(0);
  if (threads != size_) start(threads);
  job_ = &job;
  go_->arrive_and_wait();  // the barrier publishes job_ to the workers
  job(0);
  done_->arrive_and_wait();
}

void Team::start(int threads) {
  stop();
  size_ = threads;
  go_.emplace(threads);
  done_.emplace(threads);
  for (int t = 1; t < threads; ++t)
    workers_.emplace_back([this, t] {
      for (;;) {
        go_->arrive_and_wait();
        if (quit_) return;
        (*job_)(t);
        done_->arrive_and_wait();
      }
    });
}
//! [team]

void Team::stop() {
  if (workers_.empty()) return;
  quit_ = true;
  go_->arrive_and_wait();
  workers_.clear();  // std::jthread joins
  quit_ = false;
  size_ = 1;
}

}  // namespace book::gemm::engine
