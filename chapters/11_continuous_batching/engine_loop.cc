#include "chapters/11_continuous_batching/engine_loop.h"

#include <exception>

namespace book::serve {

PendingCompletion::Snapshot PendingCompletion::wait_accepted() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return state_.accepted || state_.ended; });
  return snapshot();
}

PendingCompletion::Snapshot PendingCompletion::wait_for_more(std::size_t seen,
                                                             std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  changed_.wait_for(lock, timeout, [&] { return state_.tokens.size() > seen || state_.ended; });
  return snapshot();
}

PendingCompletion::Snapshot PendingCompletion::wait_ended() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return state_.ended; });
  return snapshot();
}

bool PendingCompletion::ended() const {
  std::lock_guard lock(mutex_);
  return state_.ended;
}

void PendingCompletion::accept() {
  std::lock_guard lock(mutex_);
  state_.accepted = true;
  changed_.notify_all();
}

void PendingCompletion::push(int token) {
  std::lock_guard lock(mutex_);
  state_.tokens.push_back(token);
  changed_.notify_all();
}

void PendingCompletion::end(ApiFinish how, std::optional<int> last_token) {
  std::lock_guard lock(mutex_);
  if (last_token) state_.tokens.push_back(*last_token);
  state_.ended = true;
  state_.how = how;
  changed_.notify_all();
}

void PendingCompletion::fail(int status, const std::string& what) {
  std::lock_guard lock(mutex_);
  state_.ended = true;
  state_.error_status = status;
  state_.error = what;
  changed_.notify_all();
}

EngineLoop::EngineLoop(kv::ModelRunner& runner, kv::BlockManager& blocks,
                       const SchedulerConfig& config)
    : engine_(runner, blocks, config), blocks_(blocks) {
  // The engine thread is the only caller of engine_ from here on: it streams each token to the
  // request's PendingCompletion as soon as it is sampled.
  engine_.on_token([this](RequestId id, int token, bool last) {
    if (!last) live_.at(id)->push(token);  // the last one comes with its finish reason
  });
  thread_ = std::thread([this] { run(); });
}

EngineLoop::~EngineLoop() { shutdown(std::chrono::milliseconds(0), 0); }

//! [handover]
std::shared_ptr<PendingCompletion> EngineLoop::submit(GenerationRequest request) {
  auto pending = std::make_shared<PendingCompletion>();
  {
    std::lock_guard lock(mutex_);
    if (stopping_)
      throw ApiError(503, "", "the server is shutting down; send the request elsewhere");
    if (broken_) throw ApiError(500, "", "the engine stopped after an internal error");
    inbox_.push_back({std::move(request), pending});
  }
  wake_.notify_one();
  return pending;  // the handler waits on it; only the engine thread writes to it
}
//! [handover]

//! [engine_thread]
void EngineLoop::run() {
  std::deque<Handover> incoming;
  std::vector<std::shared_ptr<PendingCompletion>> cancels;
  for (;;) {
    bool step = false;
    {
      std::unique_lock lock(mutex_);
      // Sleep until there is something to do: new requests, cancels, a shutdown, or work to step.
      wake_.wait(lock, [&] {
        return !inbox_.empty() || !cancels_.empty() || stopping_ ||
               ((!held_ || allowed_ > 0) && engine_.has_work());
      });
      incoming.swap(inbox_);
      cancels.swap(cancels_);
      if (stopping_ && (std::chrono::steady_clock::now() >= deadline_ ||
                        report_.drain_steps >= max_drain_steps_)) {
        // The bound ran out: what is still in flight is cancelled, with its tokens so far.
        for (auto& [id, pending] : live_) pending->end(ApiFinish::kCancelled);
        for (auto& h : incoming) h.pending->end(ApiFinish::kCancelled);
        report_.cancelled += static_cast<int>(live_.size() + incoming.size());
        live_.clear();
        return;
      }
      step = !held_ || allowed_ > 0;
    }
    apply_cancels(cancels, incoming);
    for (auto& h : incoming) {  // the engine's own checks refuse bad requests here
      try {
        live_.emplace(engine_.submit(h.request), h.pending);
        {
          std::lock_guard lock(mutex_);
          ++accepted_;
        }
        h.pending->accept();
      } catch (const Error& e) {
        h.pending->fail(400, e.what());
      }
    }
    incoming.clear();
    if (!step || !engine_.has_work()) {
      std::lock_guard lock(mutex_);
      if (stopping_ && !engine_.has_work() && inbox_.empty()) return;  // drained
      continue;
    }
    try {
      const StepRecord record = engine_.step();
      std::lock_guard lock(mutex_);
      ++steps_;
      if (held_ && allowed_ > 0) --allowed_;
      if (stopping_) ++report_.drain_steps;
      max_batch_ = std::max(max_batch_, record.decode_rows + record.prefill_chunks);
    } catch (const std::exception& e) {  // a bug: fail every request rather than hang them
      std::lock_guard lock(mutex_);
      broken_ = true;
      for (auto& [id, pending] : live_)
        pending->fail(500, std::string("engine error: ") + e.what());
      for (auto& h : inbox_) h.pending->fail(500, std::string("engine error: ") + e.what());
      live_.clear();
      inbox_.clear();
      return;
    }
    const std::vector<Completion> finished = engine_.take_finished();
    {
      // Counted before any handler wakes, so a client that has its answer sees the counts and
      // the blocks its request freed.
      std::lock_guard lock(mutex_);
      completed_ += static_cast<std::int64_t>(finished.size());
      if (stopping_) report_.finished += static_cast<int>(finished.size());
      used_blocks_ = blocks_.num_used_blocks();
    }
    for (const Completion& c : finished) {
      live_.at(c.id)->end(c.reason == FinishReason::kStop ? ApiFinish::kStop : ApiFinish::kLength,
                          c.tokens.back());
      live_.erase(c.id);
    }
  }
}
//! [engine_thread]

//! [cancel]
void EngineLoop::cancel(std::shared_ptr<PendingCompletion> pending) {
  {
    std::lock_guard lock(mutex_);
    cancels_.push_back(std::move(pending));
  }
  wake_.notify_one();
}

// On the engine thread, between steps: a cancelled request leaves the engine (its blocks go back
// to the pool) and its handler sees "cancelled"; one still in the inbox never enters.
void EngineLoop::apply_cancels(std::vector<std::shared_ptr<PendingCompletion>>& cancels,
                               std::deque<Handover>& incoming) {
  int count = 0;
  for (const auto& pending : cancels) {
    if (pending->ended()) continue;
    for (auto it = incoming.begin(); it != incoming.end(); ++it)
      if (it->pending == pending) {
        incoming.erase(it);
        break;
      }
    for (auto it = live_.begin(); it != live_.end(); ++it)
      if (it->second == pending) {
        engine_.cancel(it->first);
        live_.erase(it);
        break;
      }
    pending->end(ApiFinish::kCancelled);
    ++count;
  }
  cancels.clear();
  std::lock_guard lock(mutex_);
  cancelled_ += count;
  used_blocks_ = blocks_.num_used_blocks();
}
//! [cancel]

void EngineLoop::hold(bool on) {
  {
    std::lock_guard lock(mutex_);
    held_ = on;
  }
  wake_.notify_one();
}

void EngineLoop::allow(int steps) {
  {
    std::lock_guard lock(mutex_);
    allowed_ += steps;
  }
  wake_.notify_one();
}

ShutdownReport EngineLoop::shutdown(std::chrono::milliseconds grace, std::int64_t max_steps) {
  {
    std::lock_guard lock(mutex_);
    if (!stopping_) {
      stopping_ = true;
      held_ = false;  // draining means stepping
      deadline_ = std::chrono::steady_clock::now() + grace;
      max_drain_steps_ = max_steps;
    }
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
  std::lock_guard lock(mutex_);
  return report_;
}

std::int64_t EngineLoop::steps() const {
  std::lock_guard lock(mutex_);
  return steps_;
}

int EngineLoop::max_batch() const {
  std::lock_guard lock(mutex_);
  return max_batch_;
}

std::int64_t EngineLoop::accepted() const {
  std::lock_guard lock(mutex_);
  return accepted_;
}

std::int64_t EngineLoop::cancelled() const {
  std::lock_guard lock(mutex_);
  return cancelled_;
}

int EngineLoop::used_blocks() const {
  std::lock_guard lock(mutex_);
  return used_blocks_;
}

std::int64_t EngineLoop::completed() const {
  std::lock_guard lock(mutex_);
  return completed_;
}

}  // namespace book::serve
