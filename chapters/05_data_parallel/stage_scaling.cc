// The ddp stage's scaling analysis: α-β of this machine's thread ranks, the step-time model
// against the measured ladder, the model for 8 → 64 GPUs, and the hierarchical all-reduce's bytes
// across nodes counted on 16 thread ranks.
#include <algorithm>
#include <cstdio>
#include <iostream>

#include "chapters/03_collectives/threads.h"
#include "chapters/04_training_baseline/config.h"
#include "chapters/05_data_parallel/hierarchical.h"
#include "chapters/05_data_parallel/scaling_model.h"
#include "chapters/05_data_parallel/stage.h"
#include "common/table.h"
#include "common/timer.h"

namespace book::ddp::stage {
namespace {

std::string ms(double seconds) { return fixed(1e3 * seconds, seconds < 0.01 ? 3 : 1); }
std::string pct(double share) { return fixed(100 * share, 0) + "%"; }

// Median seconds of `repeats` ring all-reduces of `bytes` on `n` thread ranks (rank 0's clock).
double time_all_reduce(int n, std::size_t bytes, int repeats) {
  std::vector<double> times;
  coll::run_ranks(n, [&](coll::Communicator& comm) {
    std::vector<float> data(bytes / sizeof(float), 1.0f);
    comm.all_reduce(std::span<float>(data), coll::ReduceOp::kSum, coll::Algorithm::kRing);
    for (int i = 0; i < repeats; ++i) {
      comm.barrier();
      const Timer timer;
      comm.all_reduce(std::span<float>(data), coll::ReduceOp::kSum, coll::Algorithm::kRing);
      if (comm.rank() == 0) times.push_back(timer.seconds());
    }
  });
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace

// The sources of these figures: the README, "The model's figures".
Cluster h100_cluster(bool hierarchical) {
  // NVLink 4 on an H100 SXM: 900 GB/s in total, 450 GB/s each way (NVIDIA H100 datasheet); one
  // 400 Gb/s NDR InfiniBand NIC per GPU (DGX H100): 50 GB/s. Latencies: order-of-magnitude figures.
  return {{5e-6, 450e9}, {10e-6, 50e9}, 8, hierarchical};
}

// The 1.3B shape of GPT-3 XL at 2048 is gpt_workload(2048, 24, ...).
Workload gpt_workload(int d_model, int layers, double global_batch) {
  train::Config c;
  c.vocab_size = 50257, c.context = 2048, c.n_layer = layers, c.n_head = d_model / 128,
  c.d_model = d_model;
  Workload w;
  w.gradient_bytes = 2.0 * static_cast<double>(c.parameter_count());  // BF16 gradients
  w.flops_per_sample = c.training_flops_per_token(2048) * 2048;
  w.global_batch = global_batch;
  w.flops_per_s = 0.4 * 989e12;  // 40% of an H100 SXM's dense BF16 peak (datasheet: 989 TFLOP/s)
  w.buckets = static_cast<int>(std::ceil(w.gradient_bytes / (25.0 * (1 << 20))));
  // AdamW on every GPU: FP32 master weights, m and v read and written, BF16 gradients read and
  // BF16 weights written, 28 bytes per parameter, at 3.35 TB/s (H100 SXM's HBM3, datasheet).
  w.replicated_s = 28.0 * static_cast<double>(c.parameter_count()) / 3.35e12;
  return w;
}

void scaling_analysis(const StageOptions& options, const std::vector<LadderRow>& rows) {
  std::cout << "\n## Why 8 -> 64 ranks may not scale: the alpha-beta step-time model\n\n";
  // 1. α and B of two thread ranks here, from a small and a large ring all-reduce.
  const int repeats = options.tour ? 15 : 60;
  const double small = 4096, large = 8 << 20;
  const double t_small = time_all_reduce(2, static_cast<std::size_t>(small), repeats);
  const double t_large = time_all_reduce(2, static_cast<std::size_t>(large), repeats / 5 + 3);
  Link here{0, 1e9};
  try {
    here = fit_link(2, small, t_small, large, t_large);
  } catch (const Error& e) {
    std::cout << "alpha-beta: " << e.what() << "; using alpha 0, B = 1 GB/s\n";
  }
  std::cout << "measured:   ring all-reduce on 2 thread ranks: 4 KiB in " << fixed(1e6 * t_small, 1)
            << " us, 8 MiB in " << fixed(1e3 * t_large, 2)
            << " ms -> alpha = " << fixed(1e6 * here.alpha_s, 1)
            << " us per step, B = " << fixed(here.bytes_per_s / 1e9, 2)
            << " GB/s per rank (chapter 3's busbw stage measures the same two regimes)\n";

  // 2. The model for this machine's ladder: compute from the one-rank run, comm from α-B.
  const auto find = [&](Rung rung, int n) -> const LadderRow* {
    for (const LadderRow& r : rows)
      if (r.rung == rung && r.ranks == n) return &r;
    return nullptr;
  };
  const DdpOptions run = resolve(run_options(options, Rung::kFlat), 1);
  const double gradient_bytes = 4.0 * static_cast<double>(run.train.model.parameter_count());
  Table here_table({"rung", "N", "model: compute + optimizer ms", "model: comm ms",
                    "model: step ms", "measured step ms", "measured / model"});
  for (Rung rung : {Rung::kFlat, Rung::kNoSync}) {
    const LadderRow* one = find(rung, 1);
    if (!one) continue;
    for (int n : options.ranks) {
      const LadderRow* measured = find(rung, n);
      if (!measured) continue;
      Workload w;
      w.gradient_bytes = gradient_bytes * (rung == Rung::kNoSync ? 1 : options.accumulation);
      w.global_batch = options.micro_batch * options.accumulation;
      w.flops_per_sample = 1;
      // One rank's forward and backward rate, and the optimizer every rank runs whatever N.
      w.replicated_s = one->optimizer_ms / 1e3;
      w.flops_per_s = w.global_batch / ((one->step_ms - one->optimizer_ms) / 1e3);
      w.buckets = rung == Rung::kNoSync ? static_cast<int>(std::max<std::size_t>(1, one->buckets))
                                        : options.accumulation;
      // Rung 4 overlaps only the last micro-batch's backward.
      w.backward_share = 2.0 / 3.0 / options.accumulation;
      const Cluster cluster{here, here, 1 << 20, false};
      const StepPrediction p = predict_step(w, cluster, n, overlaps_backward(rung));
      here_table.add_row({rung_name(rung), std::to_string(n), ms(p.compute_s), ms(p.comm_s),
                          ms(p.step_s), fixed(measured->step_ms, 1),
                          fixed(measured->step_ms / (1e3 * p.step_s), 2)});
    }
  }
  std::cout << "\nThis machine (the model assumes one core per rank; N above the core count "
               "shares cores, which the model does not know):\n\n"
            << here_table.markdown();

  // 3. The same model for GPUs: 8 -> 64 H100s, 8 per node.
  struct Scenario {
    std::string name;
    Workload workload;
    bool hierarchical, overlap, weak;
  };
  const Workload base = gpt_workload(2048, 24, 256);
  Workload small_buckets = base;
  small_buckets.buckets = static_cast<int>(std::ceil(base.gradient_bytes / (1 << 20)));
  const std::vector<Scenario> scenarios = {
      {"1.3B, batch 256 fixed, flat ring, 25 MiB buckets overlapped", base, false, true, false},
      {"the same, hierarchical all-reduce", base, true, true, false},
      {"the same, flat ring after backward (no overlap)", base, false, false, false},
      {"the same, flat ring, 1 MiB buckets (25x the latency)", small_buckets, false, true, false},
      {"1.3B, 32 sequences per GPU (batch grows with N), flat", gpt_workload(2048, 24, 32), false,
       true, true},
      {"4x the parameters (d_model 4096), batch 256 fixed, flat", gpt_workload(4096, 24, 256),
       false, true, false},
  };
  Table gpu(
      {"scenario", "N", "compute ms", "all-reduce ms", "exposed ms", "step ms", "efficiency"});
  double flat8 = 0, flat64 = 0, hier64 = 0;
  for (const Scenario& s : scenarios) {
    for (int n : {8, 16, 32, 64}) {
      Workload w = s.workload;
      if (s.weak) w.global_batch = s.workload.global_batch * n;
      const StepPrediction p = predict_step(w, h100_cluster(s.hierarchical), n, s.overlap);
      gpu.add_row({s.name, std::to_string(n), ms(p.compute_s), ms(p.comm_s), ms(p.exposed_s),
                   ms(p.step_s), pct(p.efficiency)});
      if (&s == &scenarios[0] && n == 8) flat8 = p.efficiency;
      if (&s == &scenarios[0] && n == 64) flat64 = p.efficiency;
      if (&s == &scenarios[1] && n == 64) hier64 = p.efficiency;
    }
  }
  std::cout << "\nH100s, 8 per node (model; figures and sources in the README): "
            << fixed(base.gradient_bytes / 1e9, 2) << " GB of BF16 gradients in " << base.buckets
            << " buckets of 25 MiB, " << fixed(base.flops_per_sample / 2048 / 1e9, 2)
            << " GFLOP per token, 40% of 989 TFLOP/s sustained; AdamW on every GPU "
            << fixed(1e3 * base.replicated_s, 1)
            << " ms; NVLink alpha 5 us, 450 GB/s; InfiniBand alpha 10 us, 50 GB/s per GPU\n\n"
            << gpu.markdown();
  const std::string dir = results_dir();
  gpu.write_csv(dir + "/ch05_scaling_model.csv");
  gpu.write_json(dir + "/ch05_scaling_model.json");
  here_table.write_csv(dir + "/ch05_model_vs_measured.csv");
  if (options.tour)
    std::cout << "tour: 05 | modelled efficiency, 1.3B on 8 -> 64 H100s, batch 256: flat ring "
                 "(hierarchical at 64) | "
              << pct(flat8) << " -> " << pct(flat64) << " (" << pct(hier64)
              << ") | 8 -> 64 GPUs do not scale linearly at a fixed batch\n";
}

void hierarchical_bytes(const StageOptions& options) {
  const int world = 16, per_node = 4;
  const std::size_t count = options.tour ? (1 << 18) : (1 << 20);  // 1 or 4 MiB of floats
  std::vector<std::uint64_t> inter(world), flat(world);
  coll::run_ranks(world, [&](coll::Communicator& comm) {
    NodeGroups groups = split_by_node(comm, per_node);
    std::vector<float> data(count, 1.0f + comm.rank());
    hierarchical_all_reduce(groups, std::span<float>(data), coll::ReduceOp::kSum);
    inter[comm.rank()] = groups.inter->counters().bytes_sent;
    const std::uint64_t before = comm.counters().bytes_sent;
    comm.all_reduce(std::span<float>(data), coll::ReduceOp::kSum, coll::Algorithm::kRing);
    flat[comm.rank()] = comm.counters().bytes_sent - before;
  });
  // Bytes that cross nodes: in the flat ring, what the ranks whose right neighbour is on another
  // node send; in the hierarchical one, everything sent on the cross-node groups.
  std::uint64_t inter_total = 0, flat_crossing = 0;
  for (int r = 0; r < world; ++r) {
    inter_total += inter[r];
    if (r / per_node != ((r + 1) % world) / per_node) flat_crossing += flat[r];
  }
  const auto crossing = static_cast<double>(flat_crossing);
  const auto hierarchical = static_cast<double>(inter_total);
  const double bytes = static_cast<double>(count) * sizeof(float);
  const bool flat_ok = flat_crossing == flat_ring_cross_node_bytes(count, 4, world, per_node);
  const bool hier_ok = inter_total == hierarchical_cross_node_bytes(count, 4, world, per_node);
  Table table({"all-reduce of " + mib(bytes) + ", 16 ranks in 4 nodes of 4",
               "bytes across nodes (counted)", "= formula", "busiest slow link",
               "ring steps on slow links"});
  table.add_row({"flat ring", mib(crossing), flat_ok ? "yes" : "NO", mib(crossing / 4), "30"});
  table.add_row({"hierarchical (RS in node, AR across, AG in node)", mib(hierarchical),
                 hier_ok ? "yes" : "NO", mib(hierarchical / world), "6"});
  std::cout
      << "\n## Hierarchical all-reduce (16 thread ranks as 4 \"nodes\")\n\n"
      << table.markdown()
      << "\nThe flat ring crosses nodes on 4 links, each carrying 2(N-1)/N of the buffer; the "
         "hierarchical all-reduce crosses on all 16 ranks' links, each with 2(M-1)/M of a "
         "quarter of it. (No times: 16 threads here share one memory bus, not links.)\n";
  if (options.tour)
    std::cout << "tour: 05 | bytes across nodes, all-reduce of " << mib(bytes)
              << " on 16 ranks in 4 nodes: flat ring vs hierarchical (counted) | " << mib(crossing)
              << " vs " << mib(hierarchical) << ", busiest link " << mib(crossing / 4) << " vs "
              << mib(hierarchical / world)
              << " | hierarchical all-reduce keeps the slow links for 1/g of the data\n";
}

}  // namespace book::ddp::stage
