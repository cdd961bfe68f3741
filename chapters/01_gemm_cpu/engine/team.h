/// @file
/// The engine's threads: a team of workers kept between calls, and the barrier they meet at.
/// See the README's rung 9 for why both exist (what waking and starting threads cost).
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <thread>
#include <vector>

namespace book::gemm::engine {

/// A barrier whose waiters spin for up to 200 µs before they sleep. Waking a sleeping thread
/// takes the kernel tens of microseconds (more in a VM), and a small multiply on two cores
/// crosses several barriers in a fraction of a millisecond (the README's rung 9 has the numbers);
/// OpenBLAS's threads spin too. std::barrier spins only briefly before it sleeps.
class SpinBarrier {
 public:
  /// A barrier for `count` threads.
  explicit SpinBarrier(int count) : count_(count), left_(count) {}
  /// Returns once all `count` threads have called it (again).
  void arrive_and_wait();

 private:
  const int count_;
  std::atomic<int> left_;
  std::atomic<unsigned> phase_{0};
};

/// Worker threads kept between calls, as OpenBLAS and BLIS keep theirs: starting a thread costs
/// tens of microseconds, a large share of a small multiply on two cores. Use one team per calling
/// thread (team_of_this_thread()), so two callers never wait for each other's workers.
class Team {
 public:
  Team() = default;
  Team(const Team&) = delete;
  Team& operator=(const Team&) = delete;
  ~Team() { stop(); }

  /// Runs job(0) on the calling thread and job(1) … job(threads − 1) on the workers; returns when
  /// all have finished. The team grows (restarts) when `threads` is more than it has, and keeps
  /// its size for fewer, its extra workers passing the barriers without a job: a caller that
  /// alternates two counts (a 2-thread GEMM, a 1-range layer) never restarts it.
  void run(int threads, const std::function<void(int)>& job);

 private:
  void start(int threads);
  void stop();

  int size_ = 1;
  int active_ = 1;  // the threads of the current job; workers from here on skip it
  std::optional<SpinBarrier> go_, done_;
  std::vector<std::jthread> workers_;
  const std::function<void(int)>* job_ = nullptr;
  bool quit_ = false;
};

/// The calling thread's team (made on first use, stopped when the thread ends).
Team& team_of_this_thread();

}  // namespace book::gemm::engine
