#include "chapters/01_gemm_cpu/engine/team.h"

#include <immintrin.h>

#include <chrono>
#include <exception>
#include <mutex>

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
  if (threads > size_) start(threads);
  job_ = &job;
  active_ = threads;
  go_->arrive_and_wait();  // the barrier publishes job_ and active_ to the workers
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
        if (t < active_) (*job_)(t);
        done_->arrive_and_wait();
      }
    });
}
//! [team]

Team& team_of_this_thread() {
  static thread_local Team team;
  return team;
}

namespace {
thread_local bool t_in_job = false;  // this thread is running a job of run_jobs
}

bool in_parallel_job() { return t_in_job; }

//! [run-jobs]
void run_jobs(int threads, const std::function<void(int)>& job) {
  if (threads <= 1 || t_in_job) {  // one level of threads only: a nested call runs in turn
    for (int t = 0; t < threads; ++t) job(t);
    return;
  }
  std::exception_ptr first_error;
  std::mutex error_mutex;
  const std::function<void(int)> guarded = [&](int t) {
    t_in_job = true;
    try {
      job(t);
    } catch (...) {  // a worker must not die with it: hand it to the caller
      const std::lock_guard lock(error_mutex);
      if (!first_error) first_error = std::current_exception();
    }
    t_in_job = false;
  };
  team_of_this_thread().run(threads, guarded);
  if (first_error) std::rethrow_exception(first_error);
}
//! [run-jobs]

void Team::stop() {
  if (workers_.empty()) return;
  quit_ = true;
  go_->arrive_and_wait();
  workers_.clear();  // std::jthread joins
  quit_ = false;
  size_ = 1;
}

}  // namespace book::gemm::engine
