// bazel run -c opt //chapters/03_collectives:fingerprint_bench
//
// What the collective fingerprint check costs (Communicator::set_fingerprint_check, on in every
// test through BOOK_COLL_CHECK=1): one all-reduce of 4 B, 4 KiB, 256 KiB and 4 MiB on 2 and 4
// thread ranks, with the check off and on. Each benchmark iteration is kCalls all-reduces in
// lockstep on every rank; 5 repetitions of every benchmark in a random interleaved order
// (common/bench_args.h). Then a table from the medians: time per all-reduce without and with the
// check, the time the check adds, and their ratio.
//
// What to expect: the check is ⌈log2 N⌉ exchanges of 16-byte messages, so it costs about what a
// tiny all-reduce costs (a few thread hand-offs) whatever the size: it doubles the time of a 4-byte
// all-reduce and disappears into a 4 MiB one.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include "chapters/03_collectives/lockstep_benchmark.h"
#include "chapters/03_collectives/threads.h"
#include "common/bench_args.h"
#include "common/benchmark_flags.h"
#include "common/main.h"
#include "common/repetition_reporter.h"
#include "common/table.h"
#include "common/timer.h"

namespace {

constexpr int kCalls = 64;  // all-reduces per benchmark iteration
constexpr std::int64_t kBytes[] = {4, 4 << 10, 256 << 10, 4 << 20};
constexpr std::int64_t kRanks[] = {2, 4};

void BM_AllReduce(benchmark::State& state) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  const int ranks = static_cast<int>(state.range(1));
  const bool check = state.range(2) != 0;
  book::coll::run_ranks(ranks, [&](book::coll::Communicator& comm) {
    std::vector<float> data(bytes / sizeof(float), 0.0f);  // zeros stay zeros: no overflow
    comm.set_fingerprint_check(check);
    book::coll::lockstep_benchmark(state, comm, [&] {
      for (int i = 0; i < kCalls; ++i) comm.all_reduce(std::span<float>(data));
    });
  });
}
BENCHMARK(BM_AllReduce)
    ->ArgsProduct({{std::begin(kBytes), std::end(kBytes)},
                   {std::begin(kRanks), std::end(kRanks)},
                   {0, 1}})
    ->ArgNames({"bytes", "ranks", "check"})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

std::string key(std::int64_t bytes, std::int64_t ranks, int check) {
  return "BM_AllReduce/bytes:" + std::to_string(bytes) + "/ranks:" + std::to_string(ranks) +
         "/check:" + std::to_string(check) + "/manual_time";
}

std::string size_name(std::int64_t bytes) {
  if (bytes >= (1 << 20)) return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= (1 << 10)) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " B";
}

}  // namespace

int bench_main(int argc, char** argv) {
  book::BenchArgs args(argc, argv);
  book::init_benchmark(&args.argc(), args.argv());  // unknown flags refused; the machine's load
  book::RepetitionReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  book::Table table({"ranks", "size", "µs per all-reduce, check off", "check on", "added µs",
                     "on / off", "spread off / on"});
  for (const std::int64_t ranks : kRanks)
    for (const std::int64_t bytes : kBytes) {
      const auto off = reporter.times.find(key(bytes, ranks, 0));
      const auto on = reporter.times.find(key(bytes, ranks, 1));
      if (off == reporter.times.end() || on == reporter.times.end()) continue;  // filtered out
      const double off_us = book::median(off->second) / kCalls;
      const double on_us = book::median(on->second) / kCalls;
      table.add_row({std::to_string(ranks), size_name(bytes), book::fixed(off_us, 2),
                     book::fixed(on_us, 2), book::fixed(on_us - off_us, 2),
                     book::fixed(on_us / off_us, 2) + "x",
                     book::fixed(100 * book::relative_spread(off->second), 0) + "% / " +
                         book::fixed(100 * book::relative_spread(on->second), 0) + "%"});
    }
  std::cout
      << "\nMedians of each benchmark's repetitions (" << kCalls
      << " all-reduces per iteration, thread ranks); spread = (slowest - fastest) / median.\n\n"
      << table.markdown();
  return 0;
}

int main(int argc, char** argv) { return book::run_main(argc, argv, bench_main); }
