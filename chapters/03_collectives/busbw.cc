// The chapter's stage: an nccl-tests-style all-reduce table on the threads backend, naive vs tree
// vs ring vs fused ring at every size, with this machine's memcpy bandwidth beside it (one thread
// alone, and each of N threads copying at once: a rank's "link" here).
//
//   bazel run -c opt //chapters/03_collectives:busbw                    # 1 KiB … 256 MiB
//   bazel run -c opt //chapters/03_collectives:busbw -- --tour          # quick, with tour lines
//   bazel run -c opt //chapters/03_collectives:busbw -- --trace /tmp/ring.json
//   options: --ranks N (default 4), --max-mib M (default 256), --repetitions R (default 5);
//   --help lists them
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "chapters/03_collectives/busbw_options.h"
#include "chapters/03_collectives/busbw_table.h"
#include "chapters/03_collectives/threads.h"
#include "common/buffer.h"
#include "common/check.h"
#include "common/machine_load.h"
#include "common/main.h"
#include "common/table.h"
#include "common/timer.h"
#include "common/trace.h"

namespace book::coll {
namespace {

// When each rank started and finished a timed batch. A batch's time runs from the first rank's
// start to the last rank's end: timed on one rank alone, a batch whose ranks left the barrier at
// different times (a late wake-up) would let the first ranks copy with the memory bus to
// themselves and look faster than ranks that really copy at once.
class Window {
 public:
  explicit Window(int ranks) : start_(ranks), end_(ranks) {}
  void start(int rank) { start_[rank] = Clock::now(); }
  void end(int rank) { end_[rank] = Clock::now(); }
  double seconds() const {
    return std::chrono::duration<double>(*std::max_element(end_.begin(), end_.end()) -
                                         *std::min_element(start_.begin(), start_.end()))
        .count();
  }

 private:
  using Clock = std::chrono::steady_clock;
  std::vector<Clock::time_point> start_, end_;  // each rank writes only its own slot
};

// Seconds per all-reduce of `bytes` on `ranks` threads, one measurement: one warm-up call, a
// barrier, then `reps` calls, from the first rank's start to the last rank's end.
double time_all_reduce(int ranks, std::size_t bytes, Algorithm algorithm, int reps) {
  Window window(ranks);
  run_ranks(ranks, [&](Communicator& comm) {
    std::vector<float> data(bytes / sizeof(float), 1.0f + static_cast<float>(comm.rank()));
    comm.all_reduce(std::span<float>(data), ReduceOp::kSum, algorithm);
    comm.barrier();
    window.start(comm.rank());
    for (int i = 0; i < reps; ++i)
      comm.all_reduce(std::span<float>(data), ReduceOp::kSum, algorithm);
    window.end(comm.rank());
  });
  return window.seconds() / reps;
}

// Each of `ranks` threads copying its own `bytes`-byte buffer at the same time: seconds per copy,
// one measurement, timed like the all-reduce. This is a rank's "link" on the threads backend:
// every byte a rank receives is a copy made while the other ranks copy too.
double time_concurrent_memcpy(int ranks, std::size_t bytes, int reps) {
  Window window(ranks);
  run_ranks(ranks, [&](Communicator& comm) {
    AlignedBuffer<char> from(bytes, static_cast<char>(comm.rank())), to(bytes, 0);
    std::memcpy(to.data(), from.data(), bytes);  // warm-up
    comm.barrier();
    window.start(comm.rank());
    for (int i = 0; i < reps; ++i) {
      std::memcpy(to.data(), from.data(), bytes);
      from[i % bytes] = to[(i + 1) % bytes];  // keep the copies observable
    }
    window.end(comm.rank());
  });
  return window.seconds() / reps;
}

// The bandwidths of one row's repetitions in GB/s: their median and spread ((max - min) / median).
struct Measured {
  std::vector<double> gbs;
  double median_gbs() const { return median(gbs); }
  std::string spread() const { return fixed(100 * relative_spread(gbs), 1) + "%"; }
};

// Bytes one rank sends in one ring all-reduce of `bytes`, counted by the communicator.
std::uint64_t ring_bytes_sent(int ranks, std::size_t bytes) {
  std::uint64_t sent = 0;
  run_ranks(ranks, [&](Communicator& comm) {
    std::vector<float> data(bytes / sizeof(float), 1.0f);
    comm.all_reduce(std::span<float>(data), ReduceOp::kSum, Algorithm::kRing);
    if (comm.rank() == 1) sent = comm.counters().bytes_sent;
  });
  return sent;
}

// One traced 4 MiB all-reduce after a warm-up one; writes `path` (Chrome JSON) and path.tsv.
std::size_t trace_one(int ranks, Algorithm algorithm, const std::string& path) {
  Trace trace;
  const std::size_t count = (4u << 20) / sizeof(float);
  run_ranks(ranks, [&](Communicator& comm) {
    std::vector<float> data(count, 1.0f);
    comm.all_reduce(std::span<float>(data), ReduceOp::kSum, algorithm);  // warm the pages
    comm.barrier();
    comm.set_trace(&trace);
    comm.all_reduce(std::span<float>(data), ReduceOp::kSum, algorithm);
    comm.set_trace(nullptr);
  });
  trace.write_json(path);
  trace.write_table(path + ".tsv");
  return trace.events().size();
}

void write_traces(int ranks, const std::string& path) {
  const std::string fused = path + ".fused.json";
  const std::size_t plain_events = trace_one(ranks, Algorithm::kRing, path);
  const std::size_t fused_events = trace_one(ranks, Algorithm::kRingFused, fused);
  std::printf(
      "wrote %s (%zu events) and %s (%zu events): a 4 MiB ring and fused-ring all-reduce on %d "
      "ranks; open them in https://ui.perfetto.dev, or plot the .tsv next to each with trace.gp\n",
      path.c_str(), plain_events, fused.c_str(), fused_events, ranks);
}

int run(int argc, char** argv) {
  const BusbwOptions options = parse_busbw_options(BusbwStage::kThreads, argc, argv);
  print_machine_load();
  const bool tour = options.tour;
  if (tour)
    std::printf(
        "tour-config: 03 | busbw --tour: %d ranks as threads, all algorithms from 1 KiB to "
        "%d MiB, both rings at 64 MiB (the chapter's table: up to 256 MiB)\n",
        options.ranks, options.max_mib);
  const int ranks = options.ranks;
  const std::size_t max_bytes = static_cast<std::size_t>(options.max_mib) << 20;
  const std::string& trace_path = options.trace;
  if (!trace_path.empty()) write_traces(ranks, trace_path);

  std::vector<std::size_t> sizes = size_sweep(1024, max_bytes, 4);
  if (tour) sizes.push_back(64u << 20);  // the size the chapter's bandwidth claim is about
  const std::size_t budget = tour ? (16u << 20) : (256u << 20);
  const std::string per_thread = "memcpy (each of " + std::to_string(ranks) + " threads at once)";
  const double bus_factor = all_reduce_bus_factor(ranks);
  Table table({"size", "algorithm", "time (us)", "algbw (GB/s)", "busbw (GB/s)", "spread",
               "busbw / concurrent memcpy"});
  std::map<std::size_t, std::map<std::string, double>> busbw;
  std::map<std::size_t, double> link_at;
  for (std::size_t bytes : sizes) {
    const int reps = repetitions_for(bytes, budget);
    const double copy = memcpy_gbs(bytes, std::max(3, reps));
    const bool big_tour_size = tour && bytes > max_bytes;
    std::vector<Algorithm> algorithms;
    for (Algorithm algo :
         {Algorithm::kNaive, Algorithm::kTree, Algorithm::kRing, Algorithm::kRingFused})
      if (!big_tour_size || algo == Algorithm::kRing || algo == Algorithm::kRingFused)
        algorithms.push_back(algo);
    // The rows of one size in turns, --repetitions times, so that a change in the machine's load
    // hits the link (concurrent memcpy) and the all-reduces alike.
    Measured link;
    std::map<Algorithm, Measured> by_algorithm;
    for (int repetition = 0; repetition < options.repetitions; ++repetition) {
      std::fprintf(stderr, "[busbw] %d ranks, %s x %d, repetition %d of %d ...\n", ranks,
                   format_bytes(bytes).c_str(), reps, repetition + 1, options.repetitions);
      link.gbs.push_back(algbw_gbs(bytes, time_concurrent_memcpy(ranks, bytes, reps)));
      for (Algorithm algo : algorithms)
        by_algorithm[algo].gbs.push_back(
            algbw_gbs(bytes, time_all_reduce(ranks, bytes, algo, reps)));
    }
    const double link_gbs = link.median_gbs();
    link_at[bytes] = link_gbs;
    const auto micros = [bytes](double gbs) { return fixed(bytes / gbs * 1e-3, 1); };
    table.add_row({format_bytes(bytes), "memcpy (1 thread)", micros(copy), fixed(copy, 2),
                   fixed(copy, 2), "", fixed(copy / link_gbs, 2)});
    table.add_row({format_bytes(bytes), per_thread, micros(link_gbs), fixed(link_gbs, 2),
                   fixed(link_gbs, 2), link.spread(), "1.00"});
    for (Algorithm algo : algorithms) {
      const Measured& m = by_algorithm[algo];
      const double alg = m.median_gbs(), bus = alg * bus_factor;
      busbw[bytes][algorithm_name(algo)] = bus;
      table.add_row({format_bytes(bytes), algorithm_name(algo), micros(alg), fixed(alg, 3),
                     fixed(bus, 3), m.spread(), fixed(bus / link_gbs, 2)});
    }
  }
  std::printf(
      "All-reduce (sum, f32) on %d ranks as threads; busbw = algbw x 2(N-1)/N = algbw x "
      "%.2f (nccl-tests); medians of %d repetitions taken in turns, spread = (max - min) / "
      "median\n\n%s\n",
      ranks, bus_factor, options.repetitions, table.markdown().c_str());
  table.write_csv(results_dir() + "/03_busbw_threads.csv");
  table.write_json(results_dir() + "/03_busbw_threads.json");

  // The tree/ring crossover: the smallest size from which the ring beats the tree at every larger
  // size too (so one noisy point does not move it).
  std::size_t crossover = 0;
  for (auto it = busbw.rbegin(); it != busbw.rend(); ++it) {
    auto& by_algo = it->second;
    if (!by_algo.count("tree")) continue;
    if (by_algo["ring"] <= by_algo["tree"]) break;
    crossover = it->first;
  }
  if (crossover)
    std::printf("tree/ring crossover: the ring is faster from %s on (at every larger size too)\n",
                format_bytes(crossover).c_str());
  else
    std::printf("tree/ring crossover: the tree was faster at every size measured\n");

  const std::uint64_t sent = ring_bytes_sent(ranks, 1u << 20);
  std::printf(
      "tour: 03 | ring all-reduce bytes sent per rank (N=%d, 1 MiB) | %.2f MiB = "
      "2(N-1)/N·S | 2(N-1)/N·S\n",
      ranks, static_cast<double>(sent) / (1u << 20));
  const std::size_t big = sizes.back();
  for (const char* algo : {"ring", "ring_fused"})
    std::printf(
        "tour: 03 | %s all-reduce busbw vs memcpy of %d threads at once (threads, %s) | %.2f "
        "GB/s = %.2f x %.2f GB/s | busbw approaches the link bandwidth (here: a thread's share of "
        "memory bandwidth)\n",
        algo, ranks, format_bytes(big).c_str(), busbw[big][algo], busbw[big][algo] / link_at[big],
        link_at[big]);
  std::printf(
      "tour: 03 | tree/ring all-reduce crossover (N=%d threads) | %s | trees win small "
      "(latency), rings win large (bandwidth)\n",
      ranks,
      crossover ? ("ring faster from " + format_bytes(crossover)).c_str()
                : "tree faster at all sizes");
  return 0;
}

}  // namespace
}  // namespace book::coll

int main(int argc, char** argv) { return book::run_main(argc, argv, book::coll::run); }
