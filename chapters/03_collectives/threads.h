/// @file
/// The threads backend: N ranks as N threads of one process, messages through mailboxes. The
/// default backend: what the tests use and what chapters 5–8 run on a laptop.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>

#include "chapters/03_collectives/communicator.h"

namespace book::coll {

/// Settings every rank's communicator starts with.
struct ThreadsOptions {
  std::chrono::milliseconds timeout{30000};      ///< See Communicator::set_timeout.
  std::size_t tree_threshold_bytes = 64 * 1024;  ///< See Communicator::set_tree_threshold_bytes.
  Trace* trace = nullptr;  ///< Where every rank records its events (not owned), or nullptr.
};

/// Runs `body` on `world_size` threads, each with its own Communicator of the group "world"
/// (rank = thread index), and returns when all have returned. If any rank throws, the others'
/// pending calls stop with a book::Error saying which rank failed, and run_ranks rethrows the
/// first rank's original exception (a book::NotImplemented stays one, so an unfinished exercise
/// reads as a skip). A rank that returns while others wait for it makes them fail at once; one
/// that is merely slow makes them fail after the timeout.
void run_ranks(int world_size, const std::function<void(Communicator&)>& body,
               const ThreadsOptions& options = {});

}  // namespace book::coll
