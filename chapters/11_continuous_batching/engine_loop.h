/// @file
/// The engine thread: one thread owns the Engine and steps it while requests arrive from the
/// HTTP handlers' threads. A handler hands its request over through a locked inbox and gets a
/// PendingCompletion back, on which it waits for its own tokens; the engine thread takes the inbox
/// between steps, submits what is there, steps once and hands every sampled token to its
/// request's PendingCompletion. The Engine itself is never touched by two threads.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "chapters/11_continuous_batching/completion_api.h"
#include "chapters/11_continuous_batching/engine.h"

namespace book::serve {

/// One request's progress, shared by the engine thread (which writes) and its handler (which
/// waits). Thread-safe.
class PendingCompletion {
 public:
  /// What a handler sees: the tokens so far and, once it ended, how.
  struct Snapshot {
    std::vector<int> tokens;       ///< every token sampled so far, in order
    bool accepted = false;         ///< the engine took it (its checks passed)
    bool ended = false;            ///< no more tokens will come
    std::optional<ApiFinish> how;  ///< length, stop or cancelled, once ended without error
    int error_status = 0;          ///< else the HTTP status of the refusal (400, 500)
    std::string error;             ///< and its message
  };
  /// Waits until the engine accepted or refused the request.
  Snapshot wait_accepted();
  /// Waits until there are more than `seen` tokens or the request ended, at most `timeout`.
  Snapshot wait_for_more(std::size_t seen, std::chrono::milliseconds timeout);
  /// Waits until the request ended (the engine thread always ends it: finished, refused, or
  /// cancelled by shutdown).
  Snapshot wait_ended();

  /// Whether the request ended (finished, refused or cancelled).
  bool ended() const;

  // The engine thread's side.
  void accept();         ///< the engine took it
  void push(int token);  ///< a sampled token
  /// Finished (with its last token, appended in the same lock so that a waiter never sees the
  /// last token without the reason) or cancelled (no token).
  void end(ApiFinish how, std::optional<int> last_token = std::nullopt);
  void fail(int status, const std::string& what);  ///< refused or the engine broke

 private:
  Snapshot snapshot() const { return state_; }
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  Snapshot state_;
};

/// What a shutdown did.
struct ShutdownReport {
  int finished = 0;              ///< in-flight requests that finished during the drain
  int cancelled = 0;             ///< in-flight requests cancelled when the bound ran out
  std::int64_t drain_steps = 0;  ///< engine steps run after shutdown began
};

/// See the file comment.
class EngineLoop {
 public:
  /// Starts the engine thread over `runner` and `blocks` (not owned; they must outlive this).
  /// Throws book::Error as Engine's constructor does.
  EngineLoop(kv::ModelRunner& runner, kv::BlockManager& blocks, const SchedulerConfig& config);
  /// Shuts down with no grace (cancels what is in flight) if shutdown() was not called.
  ~EngineLoop();
  EngineLoop(const EngineLoop&) = delete;
  EngineLoop& operator=(const EngineLoop&) = delete;

  /// Hands a request to the engine thread; the result is ended by that thread. Throws
  /// ApiError(503) once shutdown began, ApiError(500) if the engine broke.
  std::shared_ptr<PendingCompletion> submit(GenerationRequest request);

  /// Cancels a request whose client went away: the engine thread drops it between steps (its
  /// KV blocks return to the pool) and ends it with ApiFinish::kCancelled. Does nothing if it
  /// already ended. Thread-safe; works while held too.
  void cancel(std::shared_ptr<PendingCompletion> pending);

  /// Holds (true) or resumes (false) stepping: requests are still taken and submitted, but no
  /// step runs. The tests use it to keep requests in flight; shutdown() resumes.
  void hold(bool on);
  /// While held, lets `steps` more steps run (the tests step a held engine one token at a time).
  void allow(int steps);

  /// Graceful shutdown: refuses new requests (503), steps until every in-flight request finished
  /// or `grace` elapsed or `max_steps` drain steps ran, whichever comes first, then cancels the
  /// rest (their handlers see finish reason "cancelled") and joins the thread. Returns what it
  /// did; a second call returns the first one's report.
  ShutdownReport shutdown(std::chrono::milliseconds grace, std::int64_t max_steps = INT64_MAX);

  std::int64_t steps() const;      ///< engine steps so far
  int max_batch() const;           ///< the most requests that ran in one step
  std::int64_t completed() const;  ///< requests finished (not cancelled)
  std::int64_t accepted() const;   ///< requests the engine took (its checks passed)
  std::int64_t cancelled() const;  ///< requests cancelled by cancel() (not by shutdown)
  int used_blocks() const;         ///< KV blocks in use after the engine thread's last change

 private:
  struct Handover {
    GenerationRequest request;
    std::shared_ptr<PendingCompletion> pending;
  };
  void run();
  void take_inbox(std::deque<Handover>& incoming);

  void apply_cancels(std::vector<std::shared_ptr<PendingCompletion>>& cancels,
                     std::deque<Handover>& incoming);

  Engine engine_;
  kv::BlockManager& blocks_;
  std::map<RequestId, std::shared_ptr<PendingCompletion>> live_;  // engine thread only

  mutable std::mutex mutex_;  // guards everything below
  std::condition_variable wake_;
  std::deque<Handover> inbox_;
  std::vector<std::shared_ptr<PendingCompletion>> cancels_;
  bool held_ = false;
  int allowed_ = 0;  // steps a held engine may still run
  bool stopping_ = false;
  bool broken_ = false;
  std::chrono::steady_clock::time_point deadline_;
  std::int64_t max_drain_steps_ = 0;
  ShutdownReport report_;
  std::int64_t steps_ = 0;
  int max_batch_ = 0;
  std::int64_t completed_ = 0;
  std::int64_t accepted_ = 0;
  std::int64_t cancelled_ = 0;
  int used_blocks_ = 0;
  std::thread thread_;  // last: started after everything above exists
};

}  // namespace book::serve
