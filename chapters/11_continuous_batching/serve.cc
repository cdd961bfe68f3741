// bazel run -c opt //chapters/11_continuous_batching:serve -- --port 8000
//
// The HTTP server: chapter 4's trained addition model behind an OpenAI-compatible
// POST /v1/completions and POST /v1/chat/completions (plain or streamed), served by this
// chapter's engine on one engine thread; a client that goes away cancels its request.
// Ctrl-C (SIGINT) or SIGTERM shuts it down gracefully: new requests get 503, in-flight ones have
// --grace-ms to finish, the rest are cancelled, then it exits.
#include <pthread.h>
#include <csignal>
#include <iostream>
#include <string>
#include <thread>

#include "chapters/10_paged_attention/served_model.h"
#include "chapters/11_continuous_batching/server.h"
#include "common/check.h"
#include "common/flags.h"
#include "common/main.h"

namespace {

using namespace book;
using namespace book::serve;

int body(int argc, char** argv) {
  ServerOptions options;
  std::string checkpoint;
  int grace_ms = 5000;
  Flags flags("serve", "chapter 4's addition model behind an OpenAI-compatible HTTP API");
  flags.add("host", &options.host, "the address to listen on");
  flags.add("port", &options.port, "the port (0: any free one, printed)").range(0, 65535);
  flags.add("max-running", &options.scheduler.max_running, "requests in a step at most")
      .range(1, 4096);
  flags.add("token-budget", &options.scheduler.token_budget, "tokens per step at most")
      .range(1, 65536);
  flags.add("blocks", &options.num_blocks, "KV blocks").range(1, 1 << 20);
  flags.add("block-size", &options.block_size, "positions per KV block").range(1, 1024);
  std::string preemption = "recompute";
  flags
      .add("preemption", &preemption, "when KV blocks run out: recompute or swap (to a host arena)")
      .choices({"recompute", "swap"});
  flags.add("host-blocks", &options.scheduler.host_blocks, "the host arena's blocks (swap)")
      .range(0, 1 << 20);
  flags.add("http-threads", &options.http_threads, "requests served at once").range(1, 1024);
  flags.add("grace-ms", &grace_ms, "on shutdown, how long in-flight requests may still run")
      .range(0, 600000);
  flags.add("checkpoint", &checkpoint, "the checkpoint (default: the one chapter 10 trains)");
  flags.parse(argc, argv);
  if (preemption == "swap") {
    options.scheduler.preemption = PreemptionMode::kSwap;
    if (options.scheduler.host_blocks == 0) options.scheduler.host_blocks = options.num_blocks;
  }
  // SIGINT and SIGTERM go to one thread that waits for them; every other thread (httplib's
  // workers, the engine thread) inherits the blocked mask, so no handler runs in odd places.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  // A client that closed its connection must not end the server: a write to it fails (EPIPE)
  // and its request is cancelled, instead of SIGPIPE killing the process.
  std::signal(SIGPIPE, SIG_IGN);
  if (checkpoint.empty())
    checkpoint = kv::runfile("chapters/10_paged_attention/addition_checkpoint.bin", argv[0]);
  auto model = kv::load_checkpoint_model(checkpoint);
  CompletionServer server(*model, options);
  std::cout << "serve: model \"" << options.model_name << "\" (context "
            << server.api_model().context << ", vocabulary \"" << options.alphabet
            << "\") on http://" << options.host << ":" << server.port()
            << "/v1/completions and /v1/chat/completions; Ctrl-C stops it" << std::endl;
  std::thread waiter([&] {
    int signal = 0;
    sigwait(&signals, &signal);
    std::cout << "serve: " << (signal == SIGINT ? "SIGINT" : "SIGTERM")
              << ": refusing new requests, draining for up to " << grace_ms << " ms" << std::endl;
    const StopReport report = server.stop(std::chrono::milliseconds(grace_ms));
    std::cout << "serve: stopped: " << report.engine.finished << " finished and "
              << report.engine.cancelled << " cancelled while draining, "
              << server.engine().completed() << " requests served in " << server.engine().steps()
              << " engine steps" << std::endl;
  });
  server.wait();
  waiter.join();
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return book::run_main(argc, argv, body); }
