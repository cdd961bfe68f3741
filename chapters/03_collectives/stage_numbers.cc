// The busbw stage's section "Numbers on this machine": an nccl-tests-style all-reduce table on
// the threads backend, naive vs tree vs ring vs fused ring at every size, with this machine's
// memcpy bandwidth beside it (one thread alone, and each of N threads copying at once: a rank's
// "link" here).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "chapters/03_collectives/busbw_table.h"
#include "chapters/03_collectives/stage.h"
#include "chapters/03_collectives/threads.h"
#include "common/buffer.h"
#include "common/timer.h"

namespace book::coll::stage {
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

}  // namespace

Measurements measure_all_reduce(const StageOptions& options) {
  const int ranks = options.ranks;
  const bool tour = options.tour;
  const std::size_t max_bytes = static_cast<std::size_t>(options.max_mib) << 20;
  Measurements out;
  out.sizes = size_sweep(1024, max_bytes, 4);
  if (tour) out.sizes.push_back(64u << 20);  // the size the chapter's bandwidth claim is about
  const std::size_t budget = tour ? (16u << 20) : (256u << 20);
  const std::string per_thread = "memcpy (each of " + std::to_string(ranks) + " threads at once)";
  const double bus_factor = all_reduce_bus_factor(ranks);
  for (std::size_t bytes : out.sizes) {
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
    out.link_gbs[bytes] = link_gbs;
    const auto micros = [bytes](double gbs) { return fixed(bytes / gbs * 1e-3, 1); };
    out.table.add_row({format_bytes(bytes), "memcpy (1 thread)", micros(copy), fixed(copy, 2),
                       fixed(copy, 2), "", fixed(copy / link_gbs, 2)});
    out.table.add_row({format_bytes(bytes), per_thread, micros(link_gbs), fixed(link_gbs, 2),
                       fixed(link_gbs, 2), link.spread(), "1.00"});
    for (Algorithm algo : algorithms) {
      const Measured& m = by_algorithm[algo];
      const double alg = m.median_gbs(), bus = alg * bus_factor;
      out.busbw[bytes][algorithm_name(algo)] = bus;
      out.table.add_row({format_bytes(bytes), algorithm_name(algo), micros(alg), fixed(alg, 3),
                         fixed(bus, 3), m.spread(), fixed(bus / link_gbs, 2)});
    }
  }
  return out;
}

TourLines numbers_section(const StageOptions& options, const Measurements& measured) {
  const int ranks = options.ranks;
  std::printf(
      "All-reduce (sum, f32) on %d ranks as threads; busbw = algbw x 2(N-1)/N = algbw x "
      "%.2f (nccl-tests); medians of %d repetitions taken in turns, spread = (max - min) / "
      "median\n\n%s\n",
      ranks, all_reduce_bus_factor(ranks), options.repetitions, measured.table.markdown().c_str());
  measured.table.write_csv(results_dir() + "/ch03_busbw_threads.csv");
  measured.table.write_json(results_dir() + "/ch03_busbw_threads.json");
  const std::size_t big = measured.sizes.back();
  const double link = measured.link_gbs.at(big);
  TourLines tour;
  for (const char* algo : {"ring", "ring_fused"}) {
    const double bus = measured.busbw.at(big).at(algo);
    char line[512];
    std::snprintf(
        line, sizeof line,
        "tour: 03 | %s all-reduce busbw vs memcpy of %d threads at once (threads, %s) | %.2f "
        "GB/s = %.2f x %.2f GB/s | busbw approaches the link bandwidth (here: a thread's share of "
        "memory bandwidth)\n",
        algo, ranks, format_bytes(big).c_str(), bus, bus / link, link);
    tour += line;
  }
  return tour;
}

}  // namespace book::coll::stage
