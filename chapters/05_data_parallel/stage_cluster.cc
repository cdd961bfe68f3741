// ddp --backend mpi --cluster: data parallelism across a real (namespace) network, in one launch
// under tools/cluster/cluster.sh (M nodes of g ranks, shared memory inside a node, a tbf-limited
// link between nodes):
// 1. flat ring against hierarchical all-reduce (hierarchical.h) at the model's gradient size and
//    4x it: time, and the bytes that cross nodes counted on the communicators against the formulas;
// 2. the links' α-β from ping-pongs (link_fit.h), across nodes and inside one;
// 3. DDP on one node (its g ranks) against the whole world (flat and hierarchical gradient
//    sync), same global batch: step time,
//    tokens/s, scaling efficiency, and scaling_model.h's prediction for each. The namespace nodes
//    share this machine's cores, so while node 0 trains alone-on-its-node, every other node trains
//    its own copy too: the cores are as busy as in the world run, and what differs is the link;
// 4. the world run's losses against the same run on thread ranks.
//
//   tools/cluster/cluster.sh run --nodes 2 --ranks-per-node 2 --
//     "$(readlink -f bazel-bin/chapters/05_data_parallel/ddp)" --backend mpi --cluster  (one line)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "chapters/01_gemm_cpu/sgemm.h"
#include "chapters/03_collectives/cluster.h"
#include "chapters/03_collectives/threads.h"
#include "chapters/05_data_parallel/ddp_trainer.h"
#include "chapters/05_data_parallel/hierarchical.h"
#include "chapters/05_data_parallel/link_fit.h"
#include "chapters/05_data_parallel/scaling_model.h"
#include "chapters/05_data_parallel/stage.h"
#include "common/table.h"
#include "common/timer.h"

namespace book::ddp::stage {
namespace {

using coll::Communicator;

std::string ms(double seconds) { return fixed(1e3 * seconds, seconds < 0.01 ? 3 : 1); }
std::string pct(double share) { return fixed(100 * share, 0) + "%"; }
// "12.3 (11.9-13.0)": the median and the range of `seconds`, in ms.
std::string ms_range(const std::vector<double>& seconds) {
  const auto [low, high] = std::minmax_element(seconds.begin(), seconds.end());
  return ms(median(seconds)) + " (" + ms(*low) + "-" + ms(*high) + ")";
}

// The slowest rank's `mine` (every rank of `world` calls it; ranks that sat out pass 0).
double slowest(Communicator& world, double mine) {
  world.all_reduce(std::span<double>(&mine, 1), coll::ReduceOp::kMax);
  return mine;
}

// Every rank's `mine`, on every rank.
std::vector<double> gather(Communicator& world, double mine) {
  std::vector<double> all(static_cast<std::size_t>(world.size()));
  world.all_gather(std::span<const double>(&mine, 1), std::span<double>(all));
  return all;
}

// One-way seconds of a message of `bytes` between world ranks `a` and `b`: `reps` round trips,
// half the mean round trip (the other ranks wait).
double ping_pong(Communicator& world, int a, int b, std::size_t bytes, int reps) {
  constexpr int kTag = 77;
  std::vector<float> buffer(std::max<std::size_t>(1, bytes / sizeof(float)), 1.0f);
  const std::span<float> message(buffer);
  double mine = 0;
  world.barrier();
  if (world.rank() == a) {
    world.send(std::span<const float>(message), b, kTag);  // warm-up
    world.recv(message, b, kTag);
    const Timer timer;
    for (int i = 0; i < reps; ++i) {
      world.send(std::span<const float>(message), b, kTag);
      world.recv(message, b, kTag);
    }
    mine = timer.seconds() / (2.0 * reps);
  } else if (world.rank() == b) {
    for (int i = 0; i <= reps; ++i) {
      world.recv(message, a, kTag);
      world.send(std::span<const float>(message), a, kTag);
    }
  }
  return slowest(world, mine);
}

// The link between ranks a and b, from the medians of `rounds` ping-pongs at two sizes.
struct LinkFit {
  std::vector<double> small_s, large_s;
  Link link;
};

constexpr double kSmallMessage = 1024, kLargeMessage = 4 << 20;

LinkFit fit_between(Communicator& world, int a, int b, int rounds) {
  LinkFit fit;
  for (int round = 0; round < rounds; ++round) {
    fit.small_s.push_back(ping_pong(world, a, b, static_cast<std::size_t>(kSmallMessage), 100));
    fit.large_s.push_back(ping_pong(world, a, b, static_cast<std::size_t>(kLargeMessage), 2));
  }
  fit.link = fit_ping_pong(kSmallMessage, median(fit.small_s), kLargeMessage, median(fit.large_s));
  return fit;
}

// What one DDP run measured on rank 0 (its own clock), over the timed steps.
struct DdpRun {
  std::vector<double> step_s, compute_s, optimizer_s, wait_s;
  std::vector<float> losses;  // every step, warm-up included
  std::int64_t tokens_per_step = 0;
  std::size_t buckets = 0;
};

// `per_node` > 0: the hierarchical gradient sync over nodes of that many ranks.
DdpRun train_on(Communicator& comm, const StageOptions& options, Rung rung, int per_node = 0) {
  DdpOptions ddp = run_options(options, rung);
  ddp.hierarchical_ranks_per_node = per_node;
  DdpTrainer trainer(comm, ddp);
  DdpRun run;
  for (int s = 0; s < options.warmup + options.steps; ++s) {
    run.losses.push_back(trainer.step().loss);
    if (s < options.warmup) continue;
    const StepTimes& t = trainer.last_times();
    run.step_s.push_back(t.step);
    run.compute_s.push_back(t.forward + t.backward);
    run.optimizer_s.push_back(t.optimizer);
    run.wait_s.push_back(t.comm_wait);
  }
  trainer.verify_replicas();
  run.tokens_per_step = trainer.tokens_per_step();
  run.buckets = trainer.buckets().size();
  return run;
}

// The largest |a − b| / |b| over the steps; 0 when the losses are bit for bit the same.
double loss_deviation(const std::vector<float>& a, const std::vector<float>& b) {
  double worst = 0;
  for (std::size_t s = 0; s < std::min(a.size(), b.size()); ++s)
    if (a[s] != b[s])
      worst = std::max(worst, std::fabs(static_cast<double>(a[s]) - b[s]) / std::fabs(b[s]));
  return worst;
}

std::string deviation_text(double deviation) {
  if (deviation == 0) return "bit for bit";
  char text[64];
  std::snprintf(text, sizeof text, "largest relative difference %.1e", deviation);
  return text;
}

}  // namespace

void cluster_analysis(const StageOptions& options, Communicator& world) {
  const coll::ClusterLayout layout = coll::cluster_layout(world.size());
  const int g = layout.ranks_per_node, n = world.size();
  const bool root = world.rank() == 0;
  const gemm::SgemmThreads one_thread(1);  // the ranks are the parallelism: one core each
  NodeGroups groups = split_by_node(world, g);
  // Ranks that wait while one node trains, or while rank 0 runs thread ranks, wait this long.
  world.set_timeout(std::chrono::minutes(20));
  const DdpOptions run = resolve(run_options(options, Rung::kFlat), n);
  const std::size_t count = run.train.model.parameter_count();  // FP32 gradient elements
  const int rounds = 5;
  if (root)
    std::cout << "\n## Across a network: the namespace cluster\n\n"
              << layout.describe()
              << (layout.link_bits_per_s > 0
                      ? "; link rate " + fixed(layout.link_bits_per_s / 8e6, 1) + " MB/s"
                      : std::string())
              << "\n";

  // 1. Flat against hierarchical: bytes across nodes counted (one call each), then timed.
  Table bytes_table({"all-reduce", "size", "bytes across nodes (counted)", "= formula",
                     "median ms (min-max)", "slowest / flat"});
  std::vector<std::size_t> counts = {count, 4 * count};
  std::map<std::pair<std::size_t, bool>, std::vector<double>> allreduce_s;
  std::map<std::pair<std::size_t, bool>, std::uint64_t> crossing;
  for (std::size_t elements : counts) {
    std::vector<float> data(elements, 1.0f + static_cast<float>(world.rank()));
    const std::uint64_t before = world.counters().bytes_sent;
    world.all_reduce(std::span<float>(data), coll::ReduceOp::kSum, coll::Algorithm::kRing);
    const std::vector<double> sent =
        gather(world, static_cast<double>(world.counters().bytes_sent - before));
    const std::uint64_t inter_before = groups.inter->counters().bytes_sent;
    hierarchical_all_reduce(groups, std::span<float>(data), coll::ReduceOp::kSum);
    const std::vector<double> inter =
        gather(world, static_cast<double>(groups.inter->counters().bytes_sent - inter_before));
    std::uint64_t flat_cross = 0, hier_cross = 0;
    for (int r = 0; r < n; ++r) {
      if (layout.node_of(r) != layout.node_of((r + 1) % n))
        flat_cross += static_cast<std::uint64_t>(sent[r]);
      hier_cross += static_cast<std::uint64_t>(inter[r]);
    }
    crossing[{elements, false}] = flat_cross;
    crossing[{elements, true}] = hier_cross;
  }
  for (int round = 0; round < rounds; ++round)
    for (std::size_t elements : counts) {
      std::vector<float> data(elements, 1.0f + static_cast<float>(world.rank()));
      for (bool hierarchical : {false, true}) {
        world.barrier();
        const Timer timer;
        if (hierarchical)
          hierarchical_all_reduce(groups, std::span<float>(data), coll::ReduceOp::kSum);
        else
          world.all_reduce(std::span<float>(data), coll::ReduceOp::kSum, coll::Algorithm::kRing);
        allreduce_s[{elements, hierarchical}].push_back(slowest(world, timer.seconds()));
      }
    }

  // 2. The links' α-β: ping-pong across nodes (rank 0 and the first rank of node 1) and inside
  // node 0 (ranks 0 and 1).
  const LinkFit across = fit_between(world, 0, g, rounds);
  const LinkFit inside = g > 1 ? fit_between(world, 0, 1, rounds) : across;
  // The hierarchical all-reduce's g cross-node rings share each node's one link.
  const Link inter_shared{across.link.alpha_s, across.link.bytes_per_s / g};
  const Cluster flat_cluster{inside.link, across.link, g, false};
  const Cluster hier_cluster{inside.link, inter_shared, g, true};

  // 3. DDP on one node (every node its own copy, at once) against the whole world, every rung
  // asked for; then 4. the world run again on thread ranks (rank 0's process), for the losses.
  struct DdpRow {
    Rung rung;
    DdpRun node, all, hierarchical;  // hierarchical: the world with the hierarchical sync
    double deviation = 0, hierarchical_deviation = 0;  // against thread ranks / the flat sync
  };
  std::vector<DdpRow> ddp_rows;
  for (Rung rung : options.rungs) {
    DdpRow row{rung, {}, {}, {}, 0, 0};
    if (root) std::cerr << "[ddp --cluster] rung " << rung_name(rung) << ": 1 node ...\n";
    // Every node trains its own copy at once: the machine's cores then carry the same load as in
    // the world run, and only the link differs (rank 0 reports node 0's copy).
    row.node = train_on(*groups.intra, options, rung);
    world.barrier();
    if (root) std::cerr << "[ddp --cluster] rung " << rung_name(rung) << ": all nodes ...\n";
    row.all = train_on(world, options, rung);
    if (root) std::cerr << "[ddp --cluster] rung " << rung_name(rung) << ": hierarchical ...\n";
    row.hierarchical = train_on(world, options, rung, g);
    row.hierarchical_deviation = loss_deviation(row.hierarchical.losses, row.all.losses);
    if (root) {
      std::cerr << "[ddp --cluster] rung " << rung_name(rung) << ": thread ranks ...\n";
      std::vector<float> thread_losses;
      coll::run_ranks(n, [&](Communicator& comm) {
        DdpRun threads = train_on(comm, options, rung);
        if (comm.rank() == 0) thread_losses = threads.losses;
      });
      row.deviation = loss_deviation(row.all.losses, thread_losses);
    }
    world.barrier();
    ddp_rows.push_back(std::move(row));
  }
  if (!root) return;

  // The tables.
  for (std::size_t elements : counts)
    for (bool hierarchical : {false, true}) {
      const std::uint64_t formula =
          hierarchical ? hierarchical_cross_node_bytes(elements, sizeof(float), n, g)
                       : flat_ring_cross_node_bytes(elements, sizeof(float), n, g);
      const std::uint64_t counted = crossing[{elements, hierarchical}];
      const auto& s = allreduce_s[{elements, hierarchical}];
      bytes_table.add_row({hierarchical ? "hierarchical (RS in node, AR across, AG in node)"
                                        : "flat ring",
                           mib(4.0 * elements), mib(static_cast<double>(counted)),
                           counted == formula ? "yes" : "NO (" + mib(formula) + ")",
                           ms_range(s),
                           fixed(median(s) / median(allreduce_s[{elements, false}]), 2)});
    }
  std::cout << "\n### Flat against hierarchical all-reduce (" << rounds
            << " rounds in turns; the slowest rank's time)\n\n"
            << bytes_table.markdown();

  Table link_table({"link", "1 KiB one-way us (min-max)", "4 MiB one-way ms (min-max)",
                    "alpha (us)", "B (MB/s)", "B / link rate"});
  const auto us_range = [](const std::vector<double>& s) {
    const auto [low, high] = std::minmax_element(s.begin(), s.end());
    return fixed(1e6 * median(s), 1) + " (" + fixed(1e6 * *low, 1) + "-" + fixed(1e6 * *high, 1) +
           ")";
  };
  const auto add_link = [&](const char* name, const LinkFit& fit, bool slow) {
    link_table.add_row({name, us_range(fit.small_s), ms_range(fit.large_s),
                        fixed(1e6 * fit.link.alpha_s, 1), fixed(fit.link.bytes_per_s / 1e6, 1),
                        slow && layout.link_bits_per_s > 0
                            ? pct(fit.link.bytes_per_s / (layout.link_bits_per_s / 8))
                            : "-"});
  };
  add_link("across nodes (rank 0 <-> rank g)", across, true);
  if (g > 1) add_link("inside a node (rank 0 <-> rank 1)", inside, false);
  std::cout << "\n### The links, from ping-pongs: t = alpha + S/B\n\n" << link_table.markdown();

  Table model_table({"what", "measured ms", "model ms", "measured / model"});
  for (std::size_t elements : counts) {
    const double bytes = 4.0 * static_cast<double>(elements);
    const double flat_model = all_reduce_seconds(n, bytes, flat_cluster);
    const double hier_model =
        hierarchical_all_reduce_seconds(n, g, bytes, inside.link, inter_shared);
    for (bool hierarchical : {false, true}) {
      const double measured = median(allreduce_s[{elements, hierarchical}]);
      const double model = hierarchical ? hier_model : flat_model;
      model_table.add_row({std::string(hierarchical ? "hierarchical" : "flat ring") +
                               " all-reduce, " + mib(bytes),
                           ms(measured), ms(model), fixed(measured / model, 2)});
    }
  }

  Table ddp_table({"rung", "ranks", "step ms (min-max)", "tokens/s", "speed-up", "efficiency",
                   "exposed comm ms", "model step ms", "losses vs thread ranks"});
  double efficiency_measured = 0, efficiency_model = 0;
  for (const DdpRow& row : ddp_rows) {
    // The model's workload from the one-node run: its forward+backward rate and its optimizer.
    Workload w;
    const int syncs = row.rung == Rung::kNoSync ? 1 : options.accumulation;
    w.gradient_bytes = 4.0 * static_cast<double>(count) * syncs;
    w.global_batch = options.micro_batch * options.accumulation;
    w.flops_per_sample = 1;
    w.flops_per_s = w.global_batch / (g * median(row.node.compute_s));
    w.replicated_s = median(row.node.optimizer_s);
    w.buckets = row.rung == Rung::kNoSync ? static_cast<int>(std::max<std::size_t>(1, row.node.buckets))
                                          : options.accumulation;
    w.backward_share = 2.0 / 3.0 / options.accumulation;  // only the last micro-batch overlaps
    const bool overlap = overlaps_backward(row.rung);
    const StepPrediction one = predict_step(w, flat_cluster, g, overlap);
    const StepPrediction all = predict_step(w, flat_cluster, n, overlap);
    const StepPrediction hier = predict_step(w, hier_cluster, n, overlap);
    const double tps_node = row.node.tokens_per_step / median(row.node.step_s);
    const double tps_all = row.all.tokens_per_step / median(row.all.step_s);
    const double speedup = tps_all / tps_node, ideal = static_cast<double>(n) / g;
    ddp_table.add_row({rung_name(row.rung), std::to_string(g) + " (1 node)",
                       ms_range(row.node.step_s), fixed(tps_node, 0), "1.00x", "-",
                       ms(median(row.node.wait_s)), ms(one.step_s), "-"});
    ddp_table.add_row({rung_name(row.rung),
                       std::to_string(n) + " (" + std::to_string(layout.nodes) + " nodes)",
                       ms_range(row.all.step_s), fixed(tps_all, 0), fixed(speedup, 2) + "x",
                       pct(speedup / ideal), ms(median(row.all.wait_s)), ms(all.step_s),
                       deviation_text(row.deviation)});
    const double tps_hier = row.hierarchical.tokens_per_step / median(row.hierarchical.step_s);
    ddp_table.add_row({rung_name(row.rung),
                       std::to_string(n) + " (" + std::to_string(layout.nodes) +
                           " nodes), hierarchical sync",
                       ms_range(row.hierarchical.step_s), fixed(tps_hier, 0),
                       fixed(tps_hier / tps_node, 2) + "x", pct(tps_hier / tps_node / ideal),
                       ms(median(row.hierarchical.wait_s)), ms(hier.step_s),
                       "vs flat sync: " + deviation_text(row.hierarchical_deviation)});
    model_table.add_row({std::string("DDP step, ") + rung_name(row.rung) + ", 1 node",
                         ms(median(row.node.step_s)), ms(one.step_s),
                         fixed(median(row.node.step_s) / one.step_s, 2)});
    model_table.add_row({std::string("DDP step, ") + rung_name(row.rung) + ", all nodes",
                         ms(median(row.all.step_s)), ms(all.step_s),
                         fixed(median(row.all.step_s) / all.step_s, 2)});
    model_table.add_row({std::string("DDP step, ") + rung_name(row.rung) +
                             ", all nodes, hierarchical sync",
                         ms(median(row.hierarchical.step_s)), ms(hier.step_s),
                         fixed(median(row.hierarchical.step_s) / hier.step_s, 2)});
    efficiency_measured = speedup / ideal;
    efficiency_model = (one.step_s / all.step_s) / ideal * 1.0;
  }
  std::cout << "\n### DDP on 1 node against all nodes (same global batch of "
            << options.micro_batch * options.accumulation << " sequences; " << options.steps
            << " timed steps after " << options.warmup << " warm-up; rank 0's clock)\n\n"
            << ddp_table.markdown();
  // The same model with the sourced H100 figures, 1 node -> 2 nodes (8 -> 16 GPUs).
  const Workload gpt = gpt_workload(2048, 24, 256);
  const StepPrediction h8 = predict_step(gpt, h100_cluster(false), 8, true);
  const StepPrediction h16 = predict_step(gpt, h100_cluster(false), 16, true);
  std::cout << "\n### The alpha-beta model against this cluster (links fitted above; the "
               "hierarchical rings share each node's link: B/g)\n\n"
            << model_table.markdown() << "\nThe same predict_step with the sourced H100 figures "
            << "(1.3B, batch 256, flat ring, overlapped; `ddp` without --cluster prints the "
               "8 -> 64 table): 1 node -> 2 nodes (8 -> 16 GPUs) keeps "
            << pct((h8.step_s / h16.step_s) / 2) << " of linear scaling; here, 1 -> "
            << layout.nodes << " nodes (last rung) measured " << pct(efficiency_measured)
            << ", modelled " << pct(efficiency_model) << "\n";

  const std::string dir = results_dir();
  bytes_table.write_csv(dir + "/ch05_cluster_allreduce.csv");
  link_table.write_csv(dir + "/ch05_cluster_links.csv");
  ddp_table.write_csv(dir + "/ch05_cluster_ddp.csv");
  model_table.write_csv(dir + "/ch05_cluster_model.csv");
  const std::size_t big = counts.back();
  std::cout << "tour: 05 | all-reduce of " << mib(4.0 * big) << " across " << layout.nodes
            << " nodes x " << g << " (cluster, " << layout.rate
            << "): flat ring vs hierarchical, bytes across nodes and time | "
            << mib(static_cast<double>(crossing[{big, false}])) << " vs "
            << mib(static_cast<double>(crossing[{big, true}])) << ", "
            << ms(median(allreduce_s[{big, false}])) << " vs "
            << ms(median(allreduce_s[{big, true}]))
            << " ms | fewer bytes on the slow link; whether that is less time depends on the link "
               "(README: across a network)\n";
  if (!ddp_rows.empty())
    std::cout << "tour: 05 | DDP scaling efficiency 1 -> " << layout.nodes << " nodes (cluster, "
              << layout.rate << ", " << rung_name(ddp_rows.back().rung) << ") | measured "
              << pct(efficiency_measured) << ", alpha-beta model " << pct(efficiency_model)
              << "; losses vs thread ranks " << deviation_text(ddp_rows.back().deviation)
              << " | a slow link between nodes costs scaling; the losses do not change\n";
}

}  // namespace book::ddp::stage
