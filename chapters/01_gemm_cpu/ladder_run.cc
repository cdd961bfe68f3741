// The ladder's measuring step: every rung at one size, checked against OpenBLAS, then timed in
// turns with it (ladder_steps.h).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <iostream>
#include <thread>

#include "chapters/01_gemm_cpu/args.h"
#include "chapters/01_gemm_cpu/dispatch.h"
#include "chapters/01_gemm_cpu/ladder_steps.h"
#include "chapters/01_gemm_cpu/openblas_peer.h"
#include "common/buffer.h"
#include "common/check.h"
#include "common/rng.h"
#include "common/timer.h"

namespace book::gemm::ladder {
namespace {

// Times of a rung and of OpenBLAS on 1 and on all threads, in seconds.
struct Paired {
  std::vector<double> rung, openblas_1t, openblas_all;
};

// A one-thread rung and OpenBLAS on one thread are timed in turns (rung, OpenBLAS, rung, ...) so
// that a change in the machine's load hits both sides of the ratio alike. Multithreaded code is
// timed in blocks instead, each after one untimed call: OpenBLAS's worker threads keep spinning
// for a while after each call (tens of milliseconds) and would steal a core from whatever runs
// next, so OpenBLAS on all threads comes after, followed by a pause, and then a multithreaded rung
// gets its own block (interleaved with one-thread calls, its second core would start every call
// cold). Enough turns for ~0.6 s of the rung (3 to 10); a rung call longer than a second is timed
// once.
Paired time_against_openblas(const std::function<void()>& rung, bool rung_multithreaded,
                             const std::function<void()>& peer, int all_threads) {
  Paired times;
  auto time_once = [](const std::function<void()>& fn) {
    Timer timer;
    fn();
    return timer.seconds();
  };
  openblas_set_threads(1);
  rung();  // warm-up (caches, page faults, thread start-up)
  const double once = time_once(rung);
  times.rung.push_back(once);
  const int turns = once > 1.0 ? 3 : std::clamp(static_cast<int>(0.6 / once), 3, 10);
  for (int turn = 0; turn < turns; ++turn) {
    times.openblas_1t.push_back(time_once(peer));
    if (once <= 1.0 && !rung_multithreaded) times.rung.push_back(time_once(rung));
  }
  openblas_set_threads(all_threads);
  peer();  // wakes its workers
  for (int turn = 0; turn < turns; ++turn) times.openblas_all.push_back(time_once(peer));
  openblas_set_threads(1);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // let its workers go to sleep
  if (rung_multithreaded && once <= 1.0) {
    rung();  // wakes its workers
    for (int turn = 0; turn < turns; ++turn) times.rung.push_back(time_once(rung));
  }
  return times;
}

}  // namespace

std::vector<Row> run_size(int n, bool slow_everywhere, int all_threads) {
  Rng rng(1000 + n);
  AlignedBuffer<float> a(static_cast<std::size_t>(n) * n), b(a.size()), c(a.size()), ref(a.size());
  fill_uniform<float>(a.span(), rng);
  fill_uniform<float>(b.span(), rng);
  const double flops = 2.0 * n * n * n;
  const auto peer = [&] { openblas_matmul(n, n, n, a.data(), n, b.data(), n, ref.data(), n); };
  openblas_set_threads(1);
  peer();                               // the reference C for the sanity checks
  std::vector<double> all_1t, all_all;  // every OpenBLAS time at this n, for its own rows
  std::vector<Row> rows;
  for (Rung rung : all_rungs()) {
    const int threads = rung_is_multithreaded(rung) ? all_threads : 1;
    Row row{rung_name(rung), n, threads, 0, ""};
    if (!slow_everywhere && rung <= Rung::kBlocked && n > 1024) {
      row.note = "skipped (slow; --slow runs it)";
      rows.push_back(row);
      continue;
    }
    std::fill(c.begin(), c.end(), std::nanf(""));
    try {
      const auto call = [&] { matmul(rung, n, n, n, a.data(), n, b.data(), n, c.data(), n); };
      call();
      if (!close_to(c.span(), ref.span(), n)) {
        row.note = "WRONG: differs from OpenBLAS (run the tests)";
      } else {
        const Paired times =
            time_against_openblas(call, rung_is_multithreaded(rung), peer, all_threads);
        const double rung_s = median(times.rung);
        row.gflops = flops / rung_s * 1e-9;
        row.ratio_1t = median(times.openblas_1t) / rung_s;
        row.ratio_all = median(times.openblas_all) / rung_s;
        all_1t.insert(all_1t.end(), times.openblas_1t.begin(), times.openblas_1t.end());
        all_all.insert(all_all.end(), times.openblas_all.begin(), times.openblas_all.end());
      }
    } catch (const NotImplemented& not_started) {
      row.note = "not started (" + rung_exercise_id(rung) + ")";
    }
    std::cerr << "[ladder] n=" << n << " " << row.name << ": "
              << (row.gflops > 0 ? fixed(row.gflops, 2) + " GFLOP/s, " + fixed(row.ratio_1t, 2) +
                                       "x OpenBLAS 1 thread"
                                 : row.note)
              << "\n";
    rows.push_back(row);
  }
  if (all_1t.empty()) {  // every rung a stub: time OpenBLAS on its own
    const Paired times = time_against_openblas(peer, false, peer, all_threads);
    all_1t = times.openblas_1t;
    all_all = times.openblas_all;
  }
  const double one = flops / median(all_1t) * 1e-9, all = flops / median(all_all) * 1e-9;
  rows.insert(rows.begin(), {{"OpenBLAS 1 thread", n, 1, one, "", 1.0, one / all},
                             {"OpenBLAS all threads", n, all_threads, all, "", all / one, 1.0}});
  std::cerr << "[ladder] n=" << n << " OpenBLAS: " << fixed(one, 1) << " GFLOP/s on 1 thread, "
            << fixed(all, 1) << " on " << all_threads << "\n";
  return rows;
}

}  // namespace book::gemm::ladder
