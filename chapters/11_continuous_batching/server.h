/// @file
/// The HTTP server: cpp-httplib (Debian's libcpp-httplib-dev) in front of the engine thread
/// (engine_loop.h). `POST /v1/completions` and `POST /v1/chat/completions` are OpenAI's
/// completions and chat completions APIs (completion_api.h), plain or streamed by server-sent
/// events; `GET /health` answers {"status": "ok"}. Each request runs on one of httplib's worker
/// threads, which parses it, hands it to the engine thread and waits for its own tokens, watching
/// the client meanwhile (client_watch.h): a client that goes away cancels its request, whose KV
/// blocks return to the pool. Bad requests get a 4xx with a JSON error that says what to fix;
/// nothing a client sends stops the server.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "chapters/04_training_baseline/model.h"
#include "chapters/10_paged_attention/block_manager.h"
#include "chapters/10_paged_attention/kv_cache.h"
#include "chapters/10_paged_attention/model_runner.h"
#include "chapters/11_continuous_batching/completion_api.h"
#include "chapters/11_continuous_batching/engine_loop.h"

namespace httplib {
class Server;
}

namespace book::serve {

/// How the server is set up.
struct ServerOptions {
  std::string host = "127.0.0.1";            ///< the address to listen on
  int port = 0;                              ///< 0: any free port (port() says which)
  std::string model_name = "addition";       ///< what "model" must say
  std::string alphabet = "0123456789+=";     ///< the tokenizer: token i is alphabet[i]
  int num_blocks = 1024;                     ///< KV blocks
  int block_size = 4;                        ///< positions per block
  SchedulerConfig scheduler{64, 256, true};  ///< max running, token budget, chunked prefill
  int http_threads = 96;                     ///< httplib's workers: requests served at once
};

/// What stop() did.
struct StopReport {
  ShutdownReport engine;        ///< requests finished and cancelled while draining
  bool responses_done = false;  ///< every in-flight response was written before the listener closed
};

/// See the file comment.
class CompletionServer {
 public:
  /// Serves `model` (not owned; must outlive the server) and starts listening. Throws
  /// book::Error if the alphabet's size is not the model's vocabulary, the options are invalid
  /// (the engine's checks) or the address cannot be bound.
  CompletionServer(train::Model<float>& model, const ServerOptions& options);
  /// stop() with no grace if it was not called.
  ~CompletionServer();
  CompletionServer(const CompletionServer&) = delete;
  CompletionServer& operator=(const CompletionServer&) = delete;

  int port() const { return port_; }  ///< the bound port
  /// Blocks until stop() finished (the `serve` binary's main thread waits here).
  void wait();
  /// Graceful shutdown: new requests get 503; in-flight ones run until they finish, `grace`
  /// elapses or `max_steps` drain steps ran, then the rest are cancelled (a non-streamed one gets
  /// 503 saying how many tokens it had, a streamed one a last chunk with finish_reason
  /// "cancelled" and [DONE]); then the listener closes. Returns within about grace + 2 s.
  StopReport stop(std::chrono::milliseconds grace, std::int64_t max_steps = INT64_MAX);

  EngineLoop& engine() { return *loop_; }             ///< the engine thread (hold, counters)
  const ApiModel& api_model() const { return api_; }  ///< name, alphabet, context

 private:
  void handle_completion(const void* request, void* response, ApiKind kind);
  void response_ended();

  ApiModel api_;
  std::unique_ptr<kv::PagedKvCache> cache_;
  std::unique_ptr<kv::ModelRunner> runner_;
  std::unique_ptr<kv::BlockManager> blocks_;
  std::unique_ptr<EngineLoop> loop_;
  std::unique_ptr<httplib::Server> http_;
  std::thread listener_;
  int port_ = 0;
  std::atomic<std::int64_t> next_id_{0};

  std::mutex mutex_;  // guards the three below
  std::condition_variable changed_;
  int open_responses_ = 0;  // handlers whose response is not yet fully written
  bool stopped_ = false;
  StopReport report_;
};

}  // namespace book::serve
