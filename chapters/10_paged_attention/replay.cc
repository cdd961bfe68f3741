#include "chapters/10_paged_attention/replay.h"

#include <algorithm>
#include <bit>
#include <deque>
#include <limits>
#include <map>

#include "chapters/10_paged_attention/block_manager.h"
#include "chapters/10_paged_attention/kv_shape.h"
#include "common/check.h"

namespace book::kv {
namespace {

// Sums over the steps under load, turned into means at the end.
struct LoadAverages {
  int steps = 0;
  double token_states = 0, reserved = 0, internal = 0, unallocated = 0, running = 0, saving = 0;
  double waste = 0;
  long waste_samples = 0;

  void finish(ReplayResult& r) const {
    const double n = std::max(1, steps), budget = static_cast<double>(r.budget_tokens);
    r.steps_under_load = steps;
    r.memory = {token_states / n / budget, reserved / n / budget, internal / n / budget,
                unallocated / n / budget};
    r.mean_running = running / n;
    r.sharing_saving = saving / n;
    r.mean_waste_per_sequence = waste / std::max(1L, waste_samples);
  }
};

// Free regions of a contiguous address space, first fit, merged on free.
class RegionAllocator {
 public:
  explicit RegionAllocator(std::int64_t size) { holes_[0] = size; }
  std::int64_t allocate(std::int64_t size) {
    for (auto it = holes_.begin(); it != holes_.end(); ++it) {
      if (it->second < size) continue;
      const std::int64_t start = it->first, rest = it->second - size;
      holes_.erase(it);
      if (rest > 0) holes_[start + size] = rest;
      return start;
    }
    return -1;  // maybe enough free slots in total, but no hole big enough: external fragmentation
  }
  void release(std::int64_t start, std::int64_t size) {
    auto it = holes_.emplace(start, size).first;
    if (const auto next = std::next(it); next != holes_.end() && start + size == next->first) {
      it->second += next->second;
      holes_.erase(next);
    }
    if (it != holes_.begin())
      if (const auto prev = std::prev(it); prev->first + prev->second == start) {
        prev->second += it->second;
        holes_.erase(it);
      }
  }

 private:
  std::map<std::int64_t, std::int64_t> holes_;  // start -> size
};

std::int64_t region_size(const Request& r, int max_len, Reservation reservation) {
  const std::int64_t total = r.total_tokens();
  switch (reservation) {
    case Reservation::kMaxLength:
      return max_len;
    case Reservation::kPowerOfTwo:
      return std::min<std::int64_t>(max_len, std::bit_ceil(static_cast<std::uint64_t>(total)));
    case Reservation::kExact:
      return total;
  }
  return total;
}

// The token a request generates as its k-th output: any fixed id will do, since nothing is
// computed; distinct per request so that outputs never look like a shared prefix.
int output_token(int request, std::size_t k) {
  return static_cast<int>((static_cast<std::uint64_t>(request) * 1000003u + k * 7919u) % 32000u);
}

}  // namespace

const char* reservation_name(Reservation reservation) {
  switch (reservation) {
    case Reservation::kMaxLength:
      return "max length";
    case Reservation::kPowerOfTwo:
      return "power of two";
    case Reservation::kExact:
      return "exact (oracle)";
  }
  return "?";
}

ReplayResult replay_contiguous(const std::vector<Request>& requests, std::int64_t budget_tokens,
                               int max_len, Reservation reservation, int max_running) {
  BOOK_CHECK(max_running >= 1, "replay_contiguous: max_running must be >= 1, got " << max_running);
  for (const Request& r : requests) {
    BOOK_CHECK(r.total_tokens() <= max_len, "replay_contiguous: request "
                                                << r.id << " holds " << r.total_tokens()
                                                << " tokens, longer than max_len " << max_len);
    BOOK_CHECK(region_size(r, max_len, reservation) <= budget_tokens,
               "replay_contiguous: the KV budget of "
                   << budget_tokens << " tokens is smaller than one request's "
                   << reservation_name(reservation) << " region ("
                   << region_size(r, max_len, reservation) << " tokens for request " << r.id
                   << "); raise the budget");
  }
  ReplayResult result;
  result.system = std::string("contiguous, ") + reservation_name(reservation);
  result.budget_tokens = budget_tokens;
  struct Active {
    const Request* request;
    std::int64_t length, start, size;
  };
  RegionAllocator space(budget_tokens);
  std::deque<const Request*> waiting;
  for (const Request& r : requests) waiting.push_back(&r);
  std::vector<Active> running;
  LoadAverages load;
  while (!waiting.empty() || !running.empty()) {
    while (!waiting.empty() && static_cast<int>(running.size()) < max_running) {
      const Request& r = *waiting.front();
      const std::int64_t size = region_size(r, max_len, reservation);
      const std::int64_t start = space.allocate(size);
      if (start < 0) break;  // first come, first served: the head waits, and so does the rest
      running.push_back({&r, static_cast<std::int64_t>(r.prompt.size()), start, size});
      result.prompt_tokens += static_cast<std::int64_t>(r.prompt.size());
      waiting.pop_front();
    }
    MemorySample sample{++result.steps, 0, 0, static_cast<int>(running.size()),
                        static_cast<int>(waiting.size())};
    double reserved = 0, internal = 0;
    for (Active& a : running) {
      ++a.length;  // one new token per running request per step
      const std::int64_t final_length = a.request->total_tokens();
      sample.stored += a.length;
      sample.allocated += a.size;
      reserved += static_cast<double>(final_length - a.length);
      internal += static_cast<double>(a.size - final_length);
      result.max_waste_per_sequence =
          std::max<int>(result.max_waste_per_sequence, static_cast<int>(a.size - a.length));
      if (!waiting.empty()) {
        load.waste += static_cast<double>(a.size - a.length);
        ++load.waste_samples;
      }
    }
    result.max_running = std::max(result.max_running, sample.running);
    if (!waiting.empty()) {
      ++load.steps;
      load.token_states += static_cast<double>(sample.stored);
      load.reserved += reserved;
      load.internal += internal;
      load.unallocated += static_cast<double>(budget_tokens - sample.allocated);
      load.running += sample.running;
    }
    result.timeline.push_back(sample);
    std::erase_if(running, [&](const Active& a) {
      if (a.length < a.request->total_tokens()) return false;
      space.release(a.start, a.size);
      return true;
    });
  }
  load.finish(result);
  return result;
}

ReplayResult replay_paged(const std::vector<Request>& requests, const PagedReplayOptions& o) {
  check_block_size("replay_paged", o.block_size);
  BOOK_CHECK(o.max_running >= 1, "replay_paged: max_running must be >= 1, got " << o.max_running);
  const std::int64_t num_blocks = o.budget_tokens / o.block_size;
  // The BlockManager counts blocks in int: 2^32 + 1 blocks became 1, nothing was ever admitted and
  // the replay ran forever.
  BOOK_CHECK(num_blocks <= std::numeric_limits<int>::max(),
             "replay_paged: the KV budget of "
                 << o.budget_tokens << " tokens is " << num_blocks << " blocks of " << o.block_size
                 << ", more than an int counts (" << std::numeric_limits<int>::max()
                 << "); use a smaller budget or larger blocks");
  for (const Request& r : requests)
    BOOK_CHECK(blocks_for(r.total_tokens(), o.block_size) <= num_blocks,
               "replay_paged: the KV budget of "
                   << o.budget_tokens << " tokens (" << num_blocks << " blocks of " << o.block_size
                   << ") is smaller than request " << r.id << " (" << r.prompt.size()
                   << " prompt + " << r.output_tokens
                   << " output tokens = " << blocks_for(r.total_tokens(), o.block_size)
                   << " blocks): no schedule can serve it; raise the budget");
  ReplayResult result;
  result.system = "paged, blocks of " + std::to_string(o.block_size) +
                  (o.prefix_caching ? ", prefix cache" : "");
  result.budget_tokens = o.budget_tokens;
  BlockManager manager(static_cast<int>(num_blocks), o.block_size, o.prefix_caching);
  std::vector<std::vector<int>> generated(requests.size());
  std::deque<int> waiting;
  for (std::size_t i = 0; i < requests.size(); ++i) waiting.push_back(static_cast<int>(i));
  std::vector<int> running;
  LoadAverages load;
  while (!waiting.empty() || !running.empty()) {
    //! [replay_admit]
    while (!waiting.empty() && static_cast<int>(running.size()) < o.max_running) {
      const int i = waiting.front();
      std::vector<int> prompt =
          requests[i].prompt;  // after a preemption: recompute the outputs too
      prompt.insert(prompt.end(), generated[i].begin(), generated[i].end());
      const Admission admission = manager.add_sequence(i, prompt);
      if (!admission.ok) break;  // not enough free blocks for the prompt: wait
      manager.mark_computed(i, static_cast<int>(prompt.size()));  // the prefill
      result.prompt_tokens += static_cast<std::int64_t>(prompt.size());
      result.cached_prompt_tokens += admission.cached_tokens;
      running.push_back(i);
      waiting.pop_front();
    }
    //! [replay_admit]
    //! [replay_decode]
    for (std::size_t k = 0; k < running.size(); ++k) {
      const int i = running[k];
      const int token = output_token(i, generated[i].size());
      bool preempted_self = false;
      while (!manager.append_token(i, token).ok) {  // out of blocks: preempt the newest
        const int victim = running.back();
        manager.free(victim);
        running.pop_back();
        waiting.push_front(victim);
        ++result.preemptions;
        if (victim == i) {
          preempted_self = true;
          break;
        }
      }
      if (preempted_self) break;  // i was the newest: everyone after it is already gone
      generated[i].push_back(token);
      manager.mark_computed(i, manager.length(i));
    }
    //! [replay_decode]
    MemorySample sample{++result.steps, 0, 0, static_cast<int>(running.size()),
                        static_cast<int>(waiting.size())};
    double reserved = 0;
    for (const int i : running) {
      const int length = manager.length(i);
      const int capacity = static_cast<int>(manager.block_table(i).size()) * o.block_size;
      reserved += std::min(capacity, requests[i].total_tokens()) - length;
      result.max_waste_per_sequence = std::max(result.max_waste_per_sequence, capacity - length);
      if (!waiting.empty()) {
        load.waste += capacity - length;
        ++load.waste_samples;
      }
    }
    // Tokens held, shared blocks counted once. Only full blocks are ever shared here (prefix hits;
    // the replay does not fork), so every reference beyond a block's first repeats B tokens.
    sample.stored =
        manager.logical_tokens() - static_cast<std::int64_t>(o.block_size) *
                                       (manager.logical_blocks() - manager.num_used_blocks());
    sample.allocated = static_cast<std::int64_t>(manager.num_used_blocks()) * o.block_size;
    result.max_running = std::max(result.max_running, sample.running);
    if (!waiting.empty()) {
      ++load.steps;
      load.token_states += static_cast<double>(sample.stored);
      load.reserved += reserved;
      load.internal += static_cast<double>(sample.allocated - sample.stored) - reserved;
      load.unallocated += static_cast<double>(o.budget_tokens - sample.allocated);
      load.running += sample.running;
      const std::int64_t logical = manager.logical_blocks();
      if (logical > 0)
        load.saving +=
            1.0 - static_cast<double>(manager.num_used_blocks()) / static_cast<double>(logical);
    }
    result.timeline.push_back(sample);
    std::erase_if(running, [&](int i) {
      if (manager.length(i) < requests[i].total_tokens()) return false;
      manager.free(i);
      return true;
    });
  }
  load.finish(result);
  result.queried_blocks = manager.prefix_stats().queried_blocks;
  result.hit_blocks = manager.prefix_stats().hit_blocks;
  return result;
}

std::string without_pressure(const std::vector<ReplayResult>& results) {
  for (const ReplayResult& r : results)
    if (r.steps_under_load == 0)
      return "no memory pressure: no request ever waited in \"" + r.system +
             "\", whose KV budget of " + std::to_string(r.budget_tokens) +
             " tokens holds every request at once, so there is nothing to compare; use a smaller "
             "--budget-tokens or more --requests";
  return "";
}

}  // namespace book::kv
