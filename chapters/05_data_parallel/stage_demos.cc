// The ddp stage's demonstrations on thread ranks: the bottleneck classifier on injected delays,
// uneven work and length-aware batching, a failure and the restart from the last checkpoint.
#include <time.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "chapters/01_gemm_cpu/sgemm.h"
#include "chapters/03_collectives/threads.h"
#include "chapters/05_data_parallel/bottleneck.h"
#include "chapters/05_data_parallel/ddp_trainer.h"
#include "chapters/05_data_parallel/length_balance.h"
#include "chapters/05_data_parallel/restart.h"
#include "chapters/05_data_parallel/stage.h"
#include "common/table.h"

namespace book::ddp::stage {
namespace {

std::string pct(double share) { return fixed(100 * share, 0) + "%"; }

// A small run for the demonstrations: a step of a few milliseconds, so injected delays of tens of
// milliseconds dominate whatever else the machine is doing.
DdpOptions demo_options(Rung rung) {
  DdpOptions o;
  o.train.model.n_layer = 2, o.train.model.d_model = 64, o.train.model.n_head = 4;
  o.train.digits = 2;
  o.train.micro_batch = 16;
  o.train.accumulation = 1;
  o.train.total_steps = 50;
  o.train.warmup_steps = 2;
  o.rung = rung;
  o.bucket_bytes = 64 << 10;
  return o;
}

double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

}  // namespace

void bottleneck_demo(const StageOptions& options) {
  const int ranks = 4, steps = options.tour ? 3 : 6;
  const gemm::SgemmThreads one_thread(1);
  const DdpOptions base = demo_options(Rung::kNoSync);
  const double gradient_mib = 4.0 * resolve(base, ranks).train.model.parameter_count() / (1 << 20);
  struct Case {
    std::string name;
    FaultInjection faults;
  };
  std::vector<Case> cases(4);
  cases[0].name = "nothing injected";
  cases[1].name = "slow loader: +50 ms per micro-batch, every rank";
  cases[1].faults.loader_delay_s = 0.05;
  cases[2].name = "slow link: +80 ms per step of gradient traffic";
  cases[2].faults.link_delay_s_per_mib = 0.08 / gradient_mib;
  cases[3].name = "straggler: rank 2 computes +60 ms per micro-batch";
  cases[3].faults.straggler_rank = 2;
  cases[3].faults.straggler_delay_s = 0.06;
  Table table(
      {"injected", "data", "compute", "exposed comm", "slowest / median", "diagnosis", "why"});
  std::vector<std::string> names;
  for (const Case& c : cases) {
    DdpOptions o = base;
    o.faults = c.faults;
    std::vector<RankSpans> spans(ranks);
    coll::run_ranks(ranks, [&](coll::Communicator& comm) {
      DdpTrainer trainer(comm, o);
      std::vector<StepTimes> times;
      for (int s = 0; s < steps + 1; ++s) {
        trainer.step();
        if (s > 0) times.push_back(trainer.last_times());
      }
      spans[comm.rank()] = average_spans(times);
    });
    const Diagnosis d = classify_bottleneck(spans);
    std::string call = bottleneck_name(d.kind);
    if (d.kind == Bottleneck::kStraggler) call += " (rank " + std::to_string(d.straggler) + ")";
    table.add_row({c.name, pct(d.data_share), pct(d.compute_share), pct(d.comm_share),
                   fixed(d.slowest_over_median, 2), call, d.reason});
    names.push_back(call);
  }
  std::cout << "\n## Compute, communication or data? The classifier on 4 thread ranks\n\n"
            << table.markdown() << "\n(Shares of the median rank's step, averaged over " << steps
            << " steps; rules and thresholds in bottleneck.h.)\n";
  table.write_csv(results_dir() + "/ch05_bottlenecks.csv");
  if (options.tour)
    std::cout << "tour: 05 | bottleneck named from per-rank spans: slow loader / slow link / "
                 "straggler | "
              << names[1] << " / " << names[2] << " / " << names[3]
              << " | a timeline tells compute, communication and data apart\n";
}

void uneven_work(const StageOptions& options) {
  const int ranks = 8;
  const std::vector<std::int64_t> lengths = mixed_lengths(256, 0.1, 7);
  // Work per token: a 64 → 256 projection (the first matmul of an MLP of width 64), so a rank's
  // work is proportional to its tokens, as a transformer's is (attention aside).
  const int width = 64, hidden = 256;
  std::vector<float> weights(static_cast<std::size_t>(width) * hidden, 0.01f);
  std::int64_t longest = *std::max_element(lengths.begin(), lengths.end());
  std::vector<float> in(static_cast<std::size_t>(longest) * width, 0.5f),
      out(static_cast<std::size_t>(longest) * hidden);
  const gemm::SgemmThreads one_thread(1);
  struct Split {
    std::string name;
    Assignment assignment;
  };
  const std::vector<Split> splits = {
      {"by count (the distributed sampler)", split_by_count(lengths.size(), ranks)},
      {"length-aware, contiguous (LeetCode 410)", split_by_cost(lengths, ranks)},
      {"length-aware, longest first (LPT)", longest_first(lengths, ranks)},
  };
  Table table({"split of 256 samples over 8 ranks", "samples per rank", "tokens max/mean",
               "measured work max/mean", "step = slowest rank, ms"});
  std::vector<double> measured_ratio;
  for (const Split& s : splits) {
    const auto loads = rank_loads(lengths, s.assignment);
    std::vector<double> tokens(loads.begin(), loads.end()), seconds;
    std::size_t fewest = SIZE_MAX, most = 0;
    // One rank at a time, timed by the thread's CPU clock: what each rank's work costs alone.
    for (const auto& samples : s.assignment) {
      fewest = std::min(fewest, samples.size());
      most = std::max(most, samples.size());
      const double start = thread_cpu_seconds();
      for (int repeat = 0; repeat < (options.tour ? 1 : 3); ++repeat)
        for (std::size_t i : samples)
          gemm::sgemm(gemm::Transpose::kNo, gemm::Transpose::kNo, static_cast<int>(lengths[i]),
                      hidden, width, 1.0f, in.data(), width, weights.data(), hidden, 0.0f,
                      out.data(), hidden);
      seconds.push_back(thread_cpu_seconds() - start);
    }
    measured_ratio.push_back(max_over_mean(seconds));
    table.add_row({s.name, std::to_string(fewest) + "-" + std::to_string(most),
                   fixed(max_over_mean(tokens), 2), fixed(measured_ratio.back(), 2),
                   fixed(1e3 * *std::max_element(seconds.begin(), seconds.end()), 1)});
  }
  std::int64_t total = 0;
  for (std::int64_t l : lengths) total += l;
  std::cout << "\n## Uneven work: 256 samples, 90% text (64-512 tokens), 10% long (2048-8192)\n\n"
            << total << " tokens in all. A synchronous step lasts as long as its slowest rank:\n\n"
            << table.markdown();
  table.write_csv(results_dir() + "/ch05_uneven_work.csv");
  if (options.tour)
    std::cout << "tour: 05 | max/mean rank work (measured), 256 mixed-length samples on 8 ranks: "
                 "by count vs length-aware (410) | "
              << fixed(measured_ratio[0], 2) << " vs " << fixed(measured_ratio[1], 2)
              << " | length-aware batching removes the stragglers that uneven samples make\n";
}

void stability_demo(const StageOptions& options) {
  std::cout << "\n## Stability: a rank fails, every rank restarts from the last checkpoint\n\n";
  RestartOptions restart;
  restart.ddp = demo_options(Rung::kNoSync);
  restart.world_size = 2;
  restart.steps = options.tour ? 6 : 10;
  restart.checkpoint_every = 2;
  restart.checkpoint_path = results_dir() + "/ch05_restart.ckpt";
  restart.timeout = std::chrono::milliseconds(20000);
  const gemm::SgemmThreads one_thread(1);
  const RestartReport clean = train_with_restarts(restart);
  restart.ddp.faults.fail_rank = 1;
  restart.ddp.faults.fail_step = restart.steps - 1;
  const RestartReport failed = train_with_restarts(restart);
  std::filesystem::remove(restart.checkpoint_path);
  const bool identical = clean.final_weights.size() == failed.final_weights.size() &&
                         std::memcmp(clean.final_weights.data(), failed.final_weights.data(),
                                     clean.final_weights.size() * sizeof(float)) == 0;
  std::cout << "failure:   " << (failed.failures.empty() ? "(none)" : failed.failures[0]) << "\n"
            << "restart:   " << failed.restarts
            << " restart(s), resumed from the checkpoint of step "
            << (failed.resumed_from.empty() ? 0 : failed.resumed_from[0]) << "\n"
            << "weights:   after step " << restart.steps << ", "
            << (identical ? "bit-identical to" : "DIFFERENT from") << " an uninterrupted run ("
            << clean.final_weights.size() << " floats compared)\n";
  try {
    coll::run_ranks(2, [](coll::Communicator& comm) {
      DdpOptions o = demo_options(Rung::kFlat);
      if (comm.rank() == 1) o.train.model.d_model = 32;  // a rank started with another config
      DdpTrainer trainer(comm, o);
    });
  } catch (const Error& e) {
    std::cout << "refused:   " << e.what() << "\n";
  }
  if (options.tour)
    std::cout << "tour: 05 | restart after rank 1 fails at step " << restart.steps - 1
              << " (checkpoint every 2 steps) | final weights "
              << (identical ? "bit-identical" : "DIFFERENT")
              << " to an uninterrupted run | atomic checkpoints make a failure cost minutes, not "
                 "the run\n";
}

}  // namespace book::ddp::stage
