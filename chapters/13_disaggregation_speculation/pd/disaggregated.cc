// The two pools on any Communicator (thread ranks or MPI processes): prefill workers that pack
// and send, decode workers that receive, wait for blocks, rebuild and decode. See
// disaggregated.h.
#include "chapters/13_disaggregation_speculation/pd/disaggregated.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <thread>

#include "chapters/03_collectives/threads.h"
#include "chapters/10_paged_attention/model_runner.h"
#include "chapters/13_disaggregation_speculation/pd/kv_transfer.h"
#include "chapters/13_disaggregation_speculation/pd/worker.h"
#include "common/check.h"

namespace book::pd {
namespace {

using coll::Communicator;

// One message per request says who it is and what follows; then its prompt, then its KV. Three
// tags, so that the KV message's bytes are counted on their own (the formula's bytes exactly).
constexpr int kTagMeta = 1, kTagPrompt = 2, kTagKv = 3;
constexpr int kMetaInts = 3 + kHeaderInts;  // index (−1: no more), prompt length, first token

void send_ints(Communicator& comm, const std::vector<std::int32_t>& v, int dst, int tag) {
  comm.send(coll::ConstBuffer(v.data(), v.size(), DType::kF32), dst, tag);  // 4 raw bytes each
}
std::vector<std::int32_t> recv_ints(Communicator& comm, std::size_t n, int src, int tag) {
  std::vector<std::int32_t> v(n);
  comm.recv(coll::Buffer(v.data(), n, DType::kF32), src, tag);
  return v;
}

// A prefilled request on its way to, or waiting in, a decode worker.
struct Arrival {
  int index = 0;
  int first_token = 0;
  KvPacket packet;
};

// Prefill worker `p`: its requests in arrival order; every finished prefill goes to its decode
// worker through `pairs[d]` (rank 0 there is this worker, rank 1 the decode worker).
void prefill_worker(int p, train::Model<float>& model, const std::vector<TimedGeneration>& requests,
                    const PdConfig& config, std::vector<std::unique_ptr<Communicator>>& pairs,
                    PdResult& result, Clock::time_point start) {
  Worker worker(model, config.prefill);
  const int P = config.prefill_workers, D = config.decode_workers;
  std::vector<int> mine;
  for (int i = p; i < static_cast<int>(requests.size()); i += P) mine.push_back(i);
  std::stable_sort(mine.begin(), mine.end(),
                   [&](int a, int b) { return requests[a].arrival_ms < requests[b].arrival_ms; });
  std::map<serve::RequestId, int> index;
  int headers = 0;
  worker.engine.on_token([&](serve::RequestId id, int token, bool) {
    const int i = index.at(id);
    const serve::GenerationRequest& r = requests[i].request;
    result.timings[i].first_token_ms = ms_since(start);
    const bool stop =
        std::find(r.stop_tokens.begin(), r.stop_tokens.end(), token) != r.stop_tokens.end();
    if (r.max_tokens == 1 || stop) {  // finished here: nothing to decode, nothing to send
      result.tokens[i] = {token};
      result.timings[i].finish_ms = result.timings[i].first_token_ms;
      return;
    }
    // The engine frees the blocks right after this callback: pack them now.
    const int prompt = static_cast<int>(r.prompt.size());
    const KvPacket packet = pack_kv(worker.cache, worker.blocks.block_table(id), prompt);
    Communicator& comm = *pairs[i % D];
    const std::uint64_t before = comm.counters().bytes_sent;
    const KvTransferHeader& h = packet.header;
    send_ints(comm, {i, prompt, token, h.n_layer, h.n_head, h.head_dim, h.tokens}, 1, kTagMeta);
    if (++headers == config.die_after_headers) {
      // The failure test: this worker goes silent mid-transfer. The decode worker must not hang.
      std::this_thread::sleep_for(3 * config.timeout);
      throw Error("prefill worker " + std::to_string(p) + " went silent (die_after_headers)");
    }
    send_ints(comm, std::vector<std::int32_t>(r.prompt.begin(), r.prompt.end()), 1, kTagPrompt);
    const std::uint64_t before_kv = comm.counters().bytes_sent;
    comm.send(std::span<const float>(packet.data), 1, kTagKv);
    result.kv_bytes[i] = static_cast<std::int64_t>(comm.counters().bytes_sent - before_kv);
    result.bytes_sent[i] = static_cast<std::int64_t>(comm.counters().bytes_sent - before);
  });
  std::size_t next = 0;
  while (next < mine.size() || worker.engine.has_work()) {
    next = submit_arrived(worker.engine, requests, mine, next, start, index, /*prefill=*/true);
    if (worker.engine.has_work())
      worker.engine.step();
    else if (next < mine.size())
      sleep_until_arrival(requests[mine[next]], start);
  }
  for (auto& pair : pairs)
    send_ints(*pair, std::vector<std::int32_t>(kMetaInts, -1), 1, kTagMeta);  // no more
}

// Decode worker `d`: one receiving thread per prefill worker fills the inbox; this thread admits
// from it in arrival order when blocks allow, rebuilds the KV and steps the engine.
void decode_worker(train::Model<float>& model, const std::vector<TimedGeneration>& requests,
                   const PdConfig& config, std::vector<std::unique_ptr<Communicator>>& pairs,
                   PdResult& result, Clock::time_point start, DecodeStats& stats) {
  Worker worker(model, config.decode);
  std::mutex mutex;
  std::condition_variable arrived;
  std::deque<Arrival> inbox;
  int senders_done = 0;
  std::exception_ptr failure;
  std::vector<std::thread> receivers;
  for (auto& pair : pairs)
    receivers.emplace_back([&, comm = pair.get()] {
      try {
        for (;;) {
          const auto meta = recv_ints(*comm, kMetaInts, 0, kTagMeta);
          if (meta[0] < 0) break;
          Arrival a{meta[0], meta[2], {}};
          a.packet.header = {meta[3], meta[4], meta[5], meta[6]};
          // Numbers of another shape than this cache's would be read as garbage: refuse the
          // transfer by name before receiving them (the sender then fails too, never hangs).
          if (!(a.packet.header.shape() == worker.cache.shape()))
            check_packet(a.packet, worker.cache.shape());
          recv_ints(*comm, static_cast<std::size_t>(meta[1]), 0, kTagPrompt);
          // The KV message's size comes from the header: a header of another shape than this
          // cache's is refused when the request is rebuilt (check_transfer), by name.
          a.packet.data.resize(
              static_cast<std::size_t>(kv_transfer_numbers(a.packet.header.shape(), meta[6])));
          comm->recv(std::span<float>(a.packet.data), 0, kTagKv);
          std::lock_guard lock(mutex);
          inbox.push_back(std::move(a));
          arrived.notify_one();
        }
      } catch (...) {
        std::lock_guard lock(mutex);
        if (!failure) failure = std::current_exception();
      }
      std::lock_guard lock(mutex);
      ++senders_done;
      arrived.notify_one();
    });
  std::map<serve::RequestId, int> index;
  worker.engine.on_token([&](serve::RequestId id, int, bool last) {
    if (last) result.timings[index.at(id)].finish_ms = ms_since(start);
  });
  std::deque<Arrival> pending;  // received, waiting for blocks: kept, never dropped
  bool gathered = config.decode_waits_for <= 0;
  auto finish = [&] {
    for (auto& r : receivers) r.join();
  };
  try {
    for (;;) {
      bool done = false;
      {
        std::unique_lock lock(mutex);
        const bool idle = !worker.engine.has_work() && (pending.empty() || !gathered);
        if (idle && inbox.empty() && senders_done < static_cast<int>(pairs.size()))
          arrived.wait(lock);
        if (failure) std::rethrow_exception(failure);
        for (; !inbox.empty(); inbox.pop_front()) pending.push_back(std::move(inbox.front()));
        done = senders_done == static_cast<int>(pairs.size());
      }
      stats.max_inbox =
          std::max<std::int64_t>(stats.max_inbox, static_cast<std::int64_t>(pending.size()));
      if (!gathered && !done && static_cast<int>(pending.size()) < config.decode_waits_for)
        continue;  // the tests' deterministic contention: wait for more before admitting any
      gathered = true;
      while (!pending.empty()) {
        Arrival& a = pending.front();
        const auto admitted =
            worker.engine.admit_prefilled(requests[a.index].request, a.first_token);
        if (!admitted) {
          ++stats.admit_retries;  // out of blocks (or batch full): it waits for a later step
          break;
        }
        const auto [id, admission] = *admitted;
        unpack_kv(a.packet, worker.cache, worker.blocks.block_table(id), admission.cached_tokens);
        index[id] = a.index;
        pending.pop_front();
      }
      if (worker.engine.has_work()) {
        worker.engine.step();
        for (serve::Completion& c : worker.engine.take_finished())
          result.tokens[index.at(c.id)] = std::move(c.tokens);
      } else if (done && pending.empty()) {
        break;
      }
    }
  } catch (...) {
    finish();
    throw;
  }
  finish();
  stats.preemptions = worker.engine.scheduler().preemptions();
  stats.prefix_hits = worker.blocks.prefix_stats().hit_blocks;
}

}  // namespace

void check_pools(const PdConfig& config) {
  BOOK_CHECK(config.prefill_workers >= 1 && config.prefill_workers <= 64,
             "PdConfig: prefill_workers = " << config.prefill_workers
                                            << ": the prefill pool needs 1..64 workers");
  BOOK_CHECK(config.decode_workers >= 1 && config.decode_workers <= 64,
             "PdConfig: decode_workers = " << config.decode_workers
                                           << ": the decode pool needs 1..64 workers");
  BOOK_CHECK(config.timeout.count() > 0,
             "PdConfig: timeout = " << config.timeout.count() << " ms, must be positive");
}

PdResult serve_disaggregated(coll::Communicator& world, train::Model<float>& model,
                             const std::vector<TimedGeneration>& requests, const PdConfig& config) {
  check_pools(config);
  const int P = config.prefill_workers, D = config.decode_workers;
  // Every rank sees the same sizes and flags, so every rank refuses alike: none waits for a peer
  // that has already given up.
  BOOK_CHECK(world.size() == P + D, "serve_disaggregated: the communicator has "
                                        << world.size() << " ranks, but " << P << " prefill + " << D
                                        << " decode workers need " << P + D
                                        << " (under MPI: mpirun -np " << P + D << ")");
  check_requests(model, requests, config.prefill, "prefill");
  check_requests(model, requests, config.decode, "decode");
  world.set_timeout(config.timeout);  // the pairs split off below inherit it
  // A decode worker's receiving threads call the communicator beside its main thread.
  world.require_concurrent_use("pd: a decode worker's receiving threads");
  PdResult result = empty_result(requests);
  DecodeStats stats;
  // One pair group per (prefill, decode) worker: each decode worker's receiving threads get a
  // communicator of their own (a Communicator is used by one thread at a time).
  std::vector<std::unique_ptr<Communicator>> pairs;
  const int me = world.rank();
  for (int p = 0; p < P; ++p)
    for (int d = 0; d < D; ++d) {
      const bool member = me == p || me == P + d;
      auto pair = world.split(member ? 0 : -1, me);
      if (member) pairs.push_back(std::move(pair));
    }
  // Each rank's clock starts as the barrier lets it go: one machine's ranks within microseconds.
  world.barrier();
  const Clock::time_point start = Clock::now();
  if (me < P)
    prefill_worker(me, model, requests, config, pairs, result, start);
  else
    decode_worker(model, requests, config, pairs, result, start, stats);
  merge_over_ranks(world, requests, stats, result);
  finish_timings(requests, result);
  return result;
}

PdResult serve_disaggregated(train::Model<float>& model,
                             const std::vector<TimedGeneration>& requests, const PdConfig& config) {
  // Refused here, before any thread starts, so that the error is the check's own.
  check_pools(config);
  check_requests(model, requests, config.prefill, "prefill");
  check_requests(model, requests, config.decode, "decode");
  PdResult result;
  coll::ThreadsOptions options;
  options.timeout = config.timeout;
  // The same code as on MPI processes: only the communicator differs.
  coll::run_ranks(
      config.prefill_workers + config.decode_workers,
      [&](Communicator& world) {
        PdResult mine = serve_disaggregated(world, model, requests, config);
        if (world.rank() == 0) result = std::move(mine);
      },
      options);
  return result;
}

}  // namespace book::pd
