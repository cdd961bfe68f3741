#include "chapters/11_continuous_batching/server.h"

#include <httplib.h>

#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <exception>

#include "chapters/11_continuous_batching/client_watch.h"
#include "common/check.h"

namespace book::serve {
namespace {

constexpr const char* kJson = "application/json";

void send_error(httplib::Response& res, int status, const std::string& param,
                const std::string& message) {
  res.status = status;
  res.set_content(error_body(status, param, message), kJson);
}

}  // namespace

// Counts a response as open from its handler's start until it is fully written (for a stream,
// until httplib drops the content provider that holds this).
class ResponseGuard {
 public:
  ResponseGuard(std::mutex& mutex, int& open, std::condition_variable& changed)
      : mutex_(mutex), open_(open), changed_(changed) {
    std::lock_guard lock(mutex_);
    ++open_;
  }
  ~ResponseGuard() {
    std::lock_guard lock(mutex_);
    --open_;
    changed_.notify_all();
  }

 private:
  std::mutex& mutex_;
  int& open_;
  std::condition_variable& changed_;
};

// Cancels a streamed request that httplib dropped before it ended (the client went away, a
// write failed, or the server stopped): held by the stream's content provider.
class CancelUnlessEnded {
 public:
  CancelUnlessEnded(EngineLoop& loop, std::shared_ptr<PendingCompletion> pending)
      : loop_(loop), pending_(std::move(pending)) {}
  ~CancelUnlessEnded() {
    if (!pending_->ended()) loop_.cancel(pending_);
  }

 private:
  EngineLoop& loop_;
  std::shared_ptr<PendingCompletion> pending_;
};

CompletionServer::CompletionServer(train::Model<float>& model, const ServerOptions& options)
    : api_{options.model_name, options.alphabet, model.config().context} {
  BOOK_CHECK(static_cast<int>(options.alphabet.size()) == model.config().vocab_size,
             "CompletionServer: the alphabet \""
                 << options.alphabet << "\" has " << options.alphabet.size()
                 << " characters, the model's vocabulary " << model.config().vocab_size);
  BOOK_CHECK(options.http_threads >= 1 && options.http_threads <= 1024,
             "CompletionServer: http_threads must be in [1, 1024], got " << options.http_threads);
  cache_ = std::make_unique<kv::PagedKvCache>(kv::kv_shape_of(model.config()), options.num_blocks,
                                              options.block_size);
  runner_ = std::make_unique<kv::ModelRunner>(model, *cache_, options.scheduler.token_budget);
  blocks_ = std::make_unique<kv::BlockManager>(options.num_blocks, options.block_size,
                                               /*prefix_caching=*/false);
  loop_ = std::make_unique<EngineLoop>(*runner_, *blocks_, options.scheduler);

  http_ = std::make_unique<httplib::Server>();
  const int threads = options.http_threads;
  http_->new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  http_->set_payload_max_length(1 << 20);  // a larger body gets 413
  http_->set_keep_alive_timeout(1);        // idle connections close within a second of stop()
  for (const auto& [path, kind] : {std::pair{"/v1/completions", ApiKind::kCompletion},
                                   std::pair{"/v1/chat/completions", ApiKind::kChat}})
    http_->Post(path, [this, kind = kind](const httplib::Request& req, httplib::Response& res) {
      try {
        handle_completion(&req, &res, kind);
      } catch (const std::exception& e) {  // never let a request take the server down
        send_error(res, 500, "", std::string("internal error: ") + e.what());
      }
    });
  http_->Get("/health", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("{\"status\":\"ok\"}", kJson);
  });
  http_->set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    const std::string what = res.status == 404 ? "no route " + req.method + " " + req.path +
                                                     "; this server answers POST /v1/completions, "
                                                     "POST /v1/chat/completions and GET /health"
                                               : "HTTP error " + std::to_string(res.status);
    send_error(res, res.status, "", what);
  });
  // Debian's httplib 0.11 listens with a backlog of 5: a burst of connections overflows it and
  // some clients' requests are lost. Linux lets listen() be called again on the bound socket
  // with a larger backlog, so the socket is remembered when httplib creates it.
  int listening_socket = -1;
  http_->set_socket_options([&listening_socket](int sock) {
    httplib::default_socket_options(sock);
    listening_socket = sock;
  });
  port_ = options.port == 0 ? http_->bind_to_any_port(options.host)
                            : (http_->bind_to_port(options.host, options.port) ? options.port : -1);
  BOOK_CHECK(port_ > 0, "CompletionServer: cannot listen on " << options.host << ":" << options.port
                                                              << " (in use? pick another --port)");
  BOOK_CHECK(::listen(listening_socket, 1024) == 0,
             "CompletionServer: cannot raise the listen backlog: " << std::strerror(errno));
  listener_ = std::thread([this] { http_->listen_after_bind(); });
}

CompletionServer::~CompletionServer() { stop(std::chrono::milliseconds(0)); }

//! [handler]
void CompletionServer::handle_completion(const void* request_ptr, void* response, ApiKind kind) {
  const auto& req = *static_cast<const httplib::Request*>(request_ptr);
  auto& res = *static_cast<httplib::Response*>(response);
  auto guard = std::make_shared<ResponseGuard>(mutex_, open_responses_, changed_);
  CompletionRequest request;
  std::shared_ptr<PendingCompletion> pending;
  try {
    request = parse_request(req.body, api_, kind);
    pending = loop_->submit(request.generation);  // to the engine thread
  } catch (const ApiError& e) {
    return send_error(res, e.status(), e.param(), e.what());
  }
  const auto accepted = pending->wait_accepted();  // the engine's own checks, before any 200
  if (accepted.error_status != 0) return send_error(res, accepted.error_status, "", accepted.error);
  const std::string id =
      (kind == ApiKind::kChat ? "chatcmpl-" : "cmpl-") + std::to_string(next_id_++);
  const std::int64_t created = std::time(nullptr);
  const int prompt_tokens = static_cast<int>(request.generation.prompt.size());
  // The client's connection, watched while its tokens come: gone means cancel.
  auto client = std::make_shared<ClientWatch>(req.remote_addr, req.remote_port);
  if (!request.stream) {
    PendingCompletion::Snapshot done;
    for (std::size_t seen = 0;; seen = done.tokens.size()) {
      done = pending->wait_for_more(seen, std::chrono::milliseconds(50));
      if (done.ended) break;
      if (client->gone()) {
        loop_->cancel(pending);  // nobody to answer: free its blocks now
        return;
      }
    }
    if (done.error_status != 0) return send_error(res, done.error_status, "", done.error);
    if (*done.how == ApiFinish::kCancelled)
      return send_error(
          res, 503, "",
          "cancelled: the server shut down after " + std::to_string(done.tokens.size()) + " of " +
              std::to_string(request.generation.max_tokens) + " tokens; send the request again");
    res.set_content(response_body(kind, id, created, api_, prompt_tokens, done.tokens, *done.how),
                    kJson);
    return;
  }
  // Streamed: one event per token as the engine samples it, then [DONE]. httplib calls this
  // again and again until sink.done(); each call waits (briefly) for this request's next tokens.
  // A client that went away (its socket closed, or a write failed) cancels the request; so does
  // httplib dropping the stream unfinished (the cancel guard's destructor).
  auto seen = std::make_shared<std::size_t>(0);
  auto cancel = std::make_shared<CancelUnlessEnded>(*loop_, pending);
  res.set_chunked_content_provider(
      "text/event-stream", [this, pending, seen, guard, cancel, client, id, created, kind](
                               std::size_t, httplib::DataSink& sink) {
        if (client->gone()) return false;  // the guard cancels
        const auto now = pending->wait_for_more(*seen, std::chrono::milliseconds(50));
        std::string events;
        for (std::size_t i = *seen; i < now.tokens.size(); ++i) {
          const bool last = now.ended && i + 1 == now.tokens.size() && now.how &&
                            *now.how != ApiFinish::kCancelled;
          events += stream_event(kind, id, created, api_, {now.tokens[i]}, i == 0,
                                 last ? now.how : std::optional<ApiFinish>());
        }
        *seen = now.tokens.size();
        if (now.ended && (now.error_status != 0 || *now.how == ApiFinish::kCancelled))
          events += now.error_status != 0
                        ? "data: " + error_body(now.error_status, "", now.error) + "\n\n"
                        : stream_event(kind, id, created, api_, {}, now.tokens.empty(),
                                       ApiFinish::kCancelled);
        if (now.ended) events += kStreamDone;
        if (!events.empty() && !sink.write(events.data(), events.size())) return false;
        if (now.ended) sink.done();
        return true;
      });
}
//! [handler]

void CompletionServer::wait() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return stopped_; });
}

StopReport CompletionServer::stop(std::chrono::milliseconds grace, std::int64_t max_steps) {
  {
    std::lock_guard lock(mutex_);
    if (stopped_ || !listener_.joinable()) return report_;
  }
  // 1. The engine refuses new requests, drains within the bound and cancels the rest; every
  //    pending request has ended when this returns.
  const ShutdownReport engine = loop_->shutdown(grace, max_steps);
  // 2. The handlers write what they have (a stream its last events); the listener stays open
  //    meanwhile (httplib cuts running streams once it stops), bounded by two seconds.
  bool responses_done;
  {
    std::unique_lock lock(mutex_);
    responses_done =
        changed_.wait_for(lock, std::chrono::seconds(2), [&] { return open_responses_ == 0; });
  }
  // 3. Close the listener and join httplib's workers.
  http_->stop();
  listener_.join();
  std::lock_guard lock(mutex_);
  report_ = {engine, responses_done};
  stopped_ = true;
  changed_.notify_all();
  return report_;
}

}  // namespace book::serve
