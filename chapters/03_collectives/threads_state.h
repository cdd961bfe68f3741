// The threads backend's shared state: mailboxes, groups, the world. Internal to threads.cc (the
// detail namespace keeps it out of the documentation).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/check.h"

namespace book::coll::detail {

// Thrown on ranks that stop because another rank failed; run_ranks prefers the original error.
class Aborted : public Error {
 public:
  using Error::Error;
};

// An eager message's copy of the payload, recycled through World::pool so that big messages do
// not page-fault fresh memory on every send.
struct Payload {
  std::unique_ptr<std::byte[]> data;
  std::size_t capacity = 0;
};

struct Message {
  int src = 0;
  int tag = 0;
  const std::byte* data = nullptr;
  std::size_t bytes = 0;
  Payload owned;                        // eager send: the payload copy
  std::atomic<bool>* copied = nullptr;  // rendezvous: set by the receiver once it has copied
};

struct Mailbox {
  std::mutex mutex;
  std::condition_variable arrived;  // a message was posted
  std::condition_variable taken;    // a rendezvous payload was copied
  std::deque<std::shared_ptr<Message>> messages;
};

struct World;

struct Group {
  std::string name;              // a unique key ("world/split0:1/split2:0"), not the display name
  std::vector<int> world_ranks;  // group rank -> world rank
  std::vector<std::unique_ptr<Mailbox>> boxes;
  std::unique_ptr<std::atomic<std::uint64_t>[]> entered;  // collectives entered, per rank
  Group(std::string n, std::vector<int> members)
      : name(std::move(n)),
        world_ranks(std::move(members)),
        entered(new std::atomic<std::uint64_t>[world_ranks.size()]) {
    for (std::size_t i = 0; i < world_ranks.size(); ++i) {
      boxes.push_back(std::make_unique<Mailbox>());
      entered[i] = 0;
    }
  }
};

struct World {
  explicit World(int n) : finished(new std::atomic<bool>[n]) {
    for (int i = 0; i < n; ++i) finished[i] = false;
  }
  std::atomic<bool> aborted{false};
  std::mutex mutex;
  std::string abort_reason;
  std::unique_ptr<std::atomic<bool>[]> finished;         // per world rank: its body has returned
  std::map<std::string, std::shared_ptr<Group>> groups;  // split results, by name

  Payload take(std::size_t bytes) {
    {
      std::lock_guard lock(pool_mutex);
      for (auto it = pool.begin(); it != pool.end(); ++it)
        if (it->capacity >= bytes) {
          Payload p = std::move(*it);
          pool.erase(it);
          return p;
        }
    }
    return {std::unique_ptr<std::byte[]>(new std::byte[bytes]), bytes};
  }
  void give_back(Payload p) {
    if (!p.data) return;
    std::lock_guard lock(pool_mutex);
    pool.push_back(std::move(p));
  }
  std::mutex pool_mutex;
  std::vector<Payload> pool;
};

}  // namespace book::coll::detail
