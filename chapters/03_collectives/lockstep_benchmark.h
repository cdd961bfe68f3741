/// @file
/// Timing a step that every rank of a group must run together, with Google Benchmark: rank 0 runs
/// the benchmark loop and, before each iteration, broadcasts whether the others step again, so all
/// ranks run the same number of steps and none waits for a step that never comes. Used by the
/// benches of chapters 5, 6 and 8 (one DDP, ZeRO or pipeline step per iteration on thread ranks).
#pragma once

#include <benchmark/benchmark.h>

#include <span>

#include "chapters/03_collectives/communicator.h"
#include "common/timer.h"

namespace book::coll {

/// Runs `step()` once untimed on every rank (warm-up), then in lockstep: on rank 0 once per
/// iteration of `state`, timed with SetIterationTime (register the benchmark with
/// UseManualTime()); on the other ranks as often as rank 0 says. Call it from every rank of `comm`.
template <typename Step>
void lockstep_benchmark(benchmark::State& state, Communicator& comm, Step&& step) {
  step();
  double go = 1;
  if (comm.rank() == 0) {
    for (auto _ : state) {
      comm.broadcast(std::span<double>(&go, 1), 0);
      const Timer timer;
      step();
      state.SetIterationTime(timer.seconds());
    }
    go = 0;
    comm.broadcast(std::span<double>(&go, 1), 0);
    return;
  }
  for (;;) {
    comm.broadcast(std::span<double>(&go, 1), 0);
    if (go == 0) return;
    step();
  }
}

}  // namespace book::coll
