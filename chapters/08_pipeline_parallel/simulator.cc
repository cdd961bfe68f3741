// The simulator: list scheduling of per-rank action lists with dependencies across ranks.
#include "chapters/08_pipeline_parallel/simulator.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>
#include <tuple>

#include "common/check.h"

namespace book::pp {
namespace {

auto as_tuple(const ActionKey& k) { return std::tuple(int(k.op), k.micro_batch, k.virtual_stage); }

}  // namespace

ActionKey key_of(const Shape& shape, int rank, const Action& action) {
  return {action.op, action.micro_batch, shape.virtual_stage(rank, action.chunk)};
}

std::optional<ActionKey> dependency_of(const Shape& shape, int rank, const Action& action) {
  const int vs = shape.virtual_stage(rank, action.chunk), last = shape.virtual_stages() - 1;
  switch (action.op) {
    case Op::kForward:
      if (vs == 0) return std::nullopt;
      return ActionKey{Op::kForward, action.micro_batch, vs - 1};
    case Op::kBackward:
      if (vs == last) return ActionKey{Op::kForward, action.micro_batch, vs};
      return ActionKey{Op::kBackward, action.micro_batch, vs + 1};
    case Op::kWeight:
      return ActionKey{Op::kBackward, action.micro_batch, vs};
  }
  return std::nullopt;
}

double Timeline::bubble_fraction() const {
  if (makespan <= 0) return 0;
  double idle_total = 0;
  for (int r = 0; r < static_cast<int>(busy.size()); ++r) idle_total += idle(r);
  return idle_total / (static_cast<double>(busy.size()) * makespan);
}

Timeline simulate(const Schedule& schedule, const Costs& costs) {
  check_schedule(schedule);
  // Finite too: an infinite cost made the makespan infinite and the bubble inf − inf = NaN.
  const auto usable = [](double cost) { return cost >= 0 && std::isfinite(cost); };
  BOOK_CHECK(
      usable(costs.forward) && usable(costs.backward) && usable(costs.weight) && usable(costs.comm),
      "simulate: costs must be non-negative and finite, got F "
          << costs.forward << ", B " << costs.backward << ", W " << costs.weight << ", comm "
          << costs.comm);
  const Shape& shape = schedule.shape;
  const int p = shape.stages;
  auto cost = [&](Op op) {
    switch (op) {
      case Op::kForward:
        return costs.forward;
      case Op::kBackward:
        return schedule.split_backward ? costs.backward : costs.backward + costs.weight;
      case Op::kWeight:
        return costs.weight;
    }
    return 0.0;
  };
  Timeline t{shape, std::vector<std::vector<TimedAction>>(p), 0, std::vector<double>(p, 0)};
  std::map<std::tuple<int, int, int>, std::pair<double, int>> ended;  // key → (end, rank)
  std::vector<std::size_t> next(p, 0);
  std::vector<double> free_at(p, 0);
  std::size_t remaining = 0;
  for (const auto& actions : schedule.ranks) remaining += actions.size();
  while (remaining > 0) {
    bool progress = false;
    for (int r = 0; r < p; ++r) {
      while (next[r] < schedule.ranks[r].size()) {
        const Action& a = schedule.ranks[r][next[r]];
        double ready = free_at[r];
        if (const auto dep = dependency_of(shape, r, a)) {
          const auto it = ended.find(as_tuple(*dep));
          if (it == ended.end()) break;  // not yet: another rank first
          ready = std::max(ready, it->second.first + (it->second.second != r ? costs.comm : 0));
        }
        const TimedAction done{a, ready, ready + cost(a.op)};
        t.ranks[r].push_back(done);
        t.busy[r] += done.end - done.start;
        free_at[r] = done.end;
        ended[as_tuple(key_of(shape, r, a))] = {done.end, r};
        ++next[r];
        --remaining;
        progress = true;
      }
    }
    if (!progress) {
      std::ostringstream stuck;
      for (int r = 0; r < p; ++r)
        if (next[r] < schedule.ranks[r].size()) {
          const Action& a = schedule.ranks[r][next[r]];
          const ActionKey dep = *dependency_of(shape, r, a);
          stuck << " rank " << r << " at " << action_name(a, shape.chunks > 1) << " waits for "
                << op_letter(dep.op) << dep.micro_batch << " of virtual stage " << dep.virtual_stage
                << ";";
        }
      BOOK_CHECK(false, "simulate: schedule '" << schedule.name << "' deadlocks:" << stuck.str());
    }
  }
  t.makespan = *std::max_element(free_at.begin(), free_at.end());
  BOOK_CHECK(std::isfinite(t.makespan),
             "simulate: the costs F " << costs.forward << ", B " << costs.backward << ", W "
                                      << costs.weight << ", comm " << costs.comm
                                      << " add up past the largest double; use smaller units");
  return t;
}

double bubble_formula(const Shape& shape) {
  check_shape(shape, "bubble_formula");
  const double p = shape.stages, m = shape.micro_batches, v = shape.chunks;
  return (p - 1) / (v * m + p - 1);
}

std::vector<int> peak_in_flight(const Schedule& schedule) {
  check_schedule(schedule);
  std::vector<int> peaks;
  const Op last = schedule.split_backward ? Op::kWeight : Op::kBackward;
  for (const auto& actions : schedule.ranks) {
    int now = 0, peak = 0;
    for (const Action& a : actions) {
      if (a.op == Op::kForward) peak = std::max(peak, ++now);
      if (a.op == last) --now;
    }
    peaks.push_back(peak);
  }
  return peaks;
}

long long boundary_messages(const Shape& shape) {
  check_shape(shape, "boundary_messages");
  if (shape.stages == 1) return 0;
  return 2LL * shape.micro_batches * (shape.virtual_stages() - 1);
}

}  // namespace book::pp
