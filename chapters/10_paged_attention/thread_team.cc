#include "chapters/10_paged_attention/thread_team.h"

#include <algorithm>

#include "common/check.h"

namespace book::kv {

ThreadTeam::ThreadTeam(int size) {
  BOOK_CHECK(size >= 1, "ThreadTeam: needs at least 1 member (the caller), got " << size);
  for (int member = 1; member < size; ++member)
    workers_.emplace_back([this, member] { serve(member); });
}

ThreadTeam::~ThreadTeam() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& worker : workers_) worker.join();
}

void ThreadTeam::serve(int member) {
  long seen = 0;
  for (;;) {
    const std::function<void(int)>* work;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      work = work_;
    }
    std::exception_ptr error;
    try {
      (*work)(member);
    } catch (...) {
      error = std::current_exception();
    }
    std::lock_guard lock(mutex_);
    if (error && !error_) error_ = error;
    if (--running_ == 0) done_.notify_one();
  }
}

void ThreadTeam::run(const std::function<void(int member)>& work) {
  if (workers_.empty()) {
    work(0);
    return;
  }
  {
    std::lock_guard lock(mutex_);
    work_ = &work;
    running_ = static_cast<int>(workers_.size());
    error_ = nullptr;
    ++generation_;
  }
  wake_.notify_all();
  std::exception_ptr mine;
  try {
    work(0);
  } catch (...) {
    mine = std::current_exception();
  }
  std::unique_lock lock(mutex_);
  done_.wait(lock, [&] { return running_ == 0; });
  if (mine) std::rethrow_exception(mine);
  if (error_) std::rethrow_exception(error_);
}

void for_query_heads(ThreadTeam& team, std::size_t queries, int n_head,
                     const std::function<void(int member, std::size_t query, int h0, int h1)>&
                         attend) {
  const long items = static_cast<long>(queries) * n_head;
  const int members = static_cast<int>(std::min<long>(team.size(), std::max(1L, items)));
  team.run([&](int member) {
    if (member >= members) return;
    const long begin = items * member / members, end = items * (member + 1) / members;
    for (long item = begin; item < end;) {
      const int h0 = static_cast<int>(item % n_head);
      const int h1 = static_cast<int>(std::min<long>(n_head, h0 + (end - item)));
      attend(member, static_cast<std::size_t>(item / n_head), h0, h1);
      item += h1 - h0;
    }
  });
}

}  // namespace book::kv
