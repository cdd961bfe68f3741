/// @file
/// A few threads kept alive between calls: a decode step's attention is tens of microseconds, less
/// than starting a thread costs, so the fast kernel's threads wait for work instead of being made
/// per call.
#pragma once

#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace book::kv {

/// `size` members: the calling thread (member 0) and size − 1 workers that sleep between runs.
class ThreadTeam {
 public:
  /// Throws book::Error if size < 1.
  explicit ThreadTeam(int size);
  ~ThreadTeam();
  ThreadTeam(const ThreadTeam&) = delete;             ///< Owns threads.
  ThreadTeam& operator=(const ThreadTeam&) = delete;  ///< Owns threads.

  /// Members, the caller included.
  int size() const { return static_cast<int>(workers_.size()) + 1; }
  /// Runs work(member) on every member at once and returns when all have finished; the first
  /// exception a member threw is rethrown here. Not reentrant: one run at a time.
  void run(const std::function<void(int member)>& work);

 private:
  void serve(int member);

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(int)>* work_ = nullptr;
  long generation_ = 0;
  int running_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
};

/// Splits the `queries` × `n_head` (query, head) pairs of one attention call over `team`, one
/// contiguous range per member with a query's heads together (so a member reads a query once),
/// and calls attend(member, query, first head, end head) for each piece of its range: how the
/// fast attention kernels (FP32 here, INT8 in chapter 14) spread a call over threads.
void for_query_heads(ThreadTeam& team, std::size_t queries, int n_head,
                     const std::function<void(int member, std::size_t query, int h0, int h1)>&
                         attend);

}  // namespace book::kv
