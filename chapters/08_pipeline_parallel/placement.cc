// The placements of a 2 × 2 grid on 2 nodes × 2 ranks: permuted worlds, the traffic formulas,
// the link's α and B, and the measurement of all six in one launch.
#include "chapters/08_pipeline_parallel/placement.h"

#include <algorithm>
#include <memory>
#include <mutex>
#include <numeric>
#include <span>

#include "chapters/03_collectives/threads.h"
#include "chapters/08_pipeline_parallel/executor.h"
#include "chapters/08_pipeline_parallel/registry.h"
#include "chapters/08_pipeline_parallel/three_d.h"
#include "common/check.h"
#include "common/timer.h"

namespace book::pp {
namespace {

int& degree_of(coll::GridDegrees& degrees, Dim dim) {
  return dim == Dim::kTp ? degrees.tp : dim == Dim::kDp ? degrees.dp : degrees.pp;
}

int coordinate_of(const coll::GridCoordinates& c, Dim dim) {
  return dim == Dim::kTp ? c.tp : dim == Dim::kDp ? c.dp : c.pp;
}

coll::Communicator& group_of(coll::ProcessGrid& grid, Dim dim) {
  return dim == Dim::kTp ? grid.tp() : dim == Dim::kDp ? grid.dp() : grid.pp();
}

Shape shape_of(const Placement& placement, const PlacementOptions& options) {
  return {placement.degrees().pp, options.micro_batches, 1};
}

// Every replica's micro-batches, replica d's at [d·m, d·m + m).
std::vector<train::Batch> micro_batches_of(const Placement& placement,
                                           const PlacementOptions& options) {
  return random_micro_batches(options.config, placement.degrees().dp * options.micro_batches,
                              options.batch, options.config.context, options.seed);
}

std::span<const train::Batch> replica_slice(const std::vector<train::Batch>& all, int dp, int m) {
  return std::span(all.data() + static_cast<std::size_t>(dp) * m, m);
}

// One group's traffic under the formulas of predict_traffic, per rank of the group (both ranks
// of a 2-rank group send the same amounts, except where noted).
LinkTraffic predicted_dim(Dim dim, const Placement& placement, const PlacementOptions& o,
                          const std::vector<std::uint64_t>& grad_elements,
                          std::size_t tree_threshold_bytes) {
  const coll::GridDegrees d = placement.degrees();
  const std::uint64_t m = o.micro_batches, h = o.config.d_model;
  const std::uint64_t bs = static_cast<std::uint64_t>(o.batch) * o.config.context, bsh = bs * h;
  const std::uint64_t blocks = o.config.n_layer / d.pp, f32 = sizeof(float);
  LinkTraffic total;
  // Sum over every rank of the world: a rank's stage decides what it sends.
  for (int stage = 0; stage < d.pp; ++stage) {
    const int ranks_in_stage = d.dp * d.tp;
    LinkTraffic rank;
    if (dim == Dim::kTp && d.tp == 2) {
      // Ring over 2 ranks: each rank sends the whole count, in 2 messages, per all-reduce; its
      // own half, in 1 message, per all-gather (the cross-entropy's row maxima).
      std::uint64_t all_reduces = 4 * blocks, elements = 4 * blocks * bsh, all_gathers = 0;
      if (stage == 0) all_reduces += 1, elements += bsh;
      if (stage == d.pp - 1) all_reduces += 2, all_gathers += 1, elements += bsh + 2 * bs + bs;
      rank.messages = (2 * all_reduces + all_gathers) * m;
      rank.bytes = elements * m * f32;
    } else if (dim == Dim::kPp && d.pp == 2) {
      const std::uint64_t embedding = o.config.vocab_size / d.tp * h;
      rank.messages = m + 1 + (stage == d.pp - 1 ? 1 : 0);  // activations, embedding, loss
      rank.bytes = (m * bsh + embedding) * f32 + (stage == d.pp - 1 ? sizeof(double) : 0);
    } else if (dim == Dim::kDp && d.dp == 2) {
      const std::uint64_t grad_bytes = grad_elements.at(stage) * f32;
      rank.messages = (grad_bytes < tree_threshold_bytes ? 1 : 2) + 1;  // gradient, loss (tree)
      rank.bytes = grad_bytes + sizeof(double);
    }
    total.messages += rank.messages * ranks_in_stage;
    total.bytes += rank.bytes * ranks_in_stage;
  }
  return total;
}

// Half the median round trip of `bytes` between world rank 0 and `peer`; the same on every rank.
double ping_pong(coll::Communicator& world, int peer, std::size_t bytes, int repetitions) {
  std::vector<float> buffer(std::max<std::size_t>(1, bytes / sizeof(float)), 1.0f);
  const coll::Buffer data{std::span<float>(buffer)};
  constexpr int kTag = 35;
  std::vector<double> times;
  world.barrier();
  for (int i = 0; i < repetitions + 1; ++i) {  // the first round warms the connection up
    if (world.rank() == 0) {
      Timer timer;
      world.send(data, peer, kTag);
      world.recv(data, peer, kTag);
      if (i > 0) times.push_back(timer.seconds() / 2);
    } else if (world.rank() == peer) {
      world.recv(data, 0, kTag);
      world.send(data, 0, kTag);
    }
  }
  double result = world.rank() == 0 ? median(times) : 0;
  world.broadcast(coll::Buffer(std::span<double>(&result, 1)), 0);
  return result;
}

// Element-wise reduction of `values` over the world (sums and maxima of small tables).
void reduce_all(coll::Communicator& world, std::vector<double>& values, coll::ReduceOp op) {
  world.all_reduce(coll::Buffer(std::span<double>(values)), op);
}

}  // namespace

const char* dim_name(Dim dim) { return dim == Dim::kTp ? "TP" : dim == Dim::kDp ? "DP" : "PP"; }

coll::GridDegrees Placement::degrees() const {
  coll::GridDegrees d{1, 1, 1, 1};
  degree_of(d, inside) = 2;
  degree_of(d, across) = 2;
  return d;
}

std::vector<int> Placement::order() const {
  const coll::GridDegrees d = degrees();
  std::vector<int> order(4);
  for (int i = 0; i < 4; ++i) {
    const coll::GridCoordinates c = coll::ProcessGrid::coordinates_of(d, i);
    order[i] = 2 * coordinate_of(c, across) + coordinate_of(c, inside);
  }
  return order;
}

std::string Placement::name() const {
  return std::string(dim_name(inside)) + " inside / " + dim_name(across) + " across";
}

std::vector<Placement> placements_2x2() {
  return {{Dim::kTp, Dim::kPp}, {Dim::kPp, Dim::kTp}, {Dim::kTp, Dim::kDp},
          {Dim::kDp, Dim::kTp}, {Dim::kDp, Dim::kPp}, {Dim::kPp, Dim::kDp}};
}

void check_2x2(int world_size, const coll::ClusterLayout& layout) {
  BOOK_CHECK(world_size == 4, "the placements of a 2 x 2 grid need 4 ranks, got "
                                  << world_size
                                  << "; run tools/cluster/cluster.sh run --nodes 2 "
                                     "--ranks-per-node 2 -- PROGRAM");
  BOOK_CHECK(layout.nodes == 2 && layout.ranks_per_node == 2,
             "the placements of a 2 x 2 grid need 2 nodes x 2 ranks, the cluster is "
                 << layout.describe()
                 << "; run tools/cluster/cluster.sh run --nodes 2 --ranks-per-node 2 -- PROGRAM");
}

std::unique_ptr<coll::Communicator> permuted_world(coll::Communicator& world,
                                                   const Placement& placement) {
  BOOK_CHECK(world.size() == 4, "permuted_world: a 2 x 2 placement needs 4 ranks, the world "
                                    << world.group() << " has " << world.size());
  const std::vector<int> order = placement.order();
  const int key =
      static_cast<int>(std::find(order.begin(), order.end(), world.rank()) - order.begin());
  std::unique_ptr<coll::Communicator> permuted = world.split(0, key);
  permuted->set_group_name(world.group() + "/" + dim_name(placement.inside) + "-inside");
  return permuted;
}

train::Config PlacementOptions::default_config() {
  train::Config c;
  c.n_layer = 4, c.d_model = 32, c.n_head = 4, c.vocab_size = 16, c.context = 12;
  return c;
}

PlacementTraffic predict_traffic(const Placement& placement, const PlacementOptions& options,
                                 const std::vector<std::uint64_t>& grad_elements,
                                 std::size_t tree_threshold_bytes) {
  BOOK_CHECK(static_cast<int>(grad_elements.size()) == placement.degrees().pp,
             "predict_traffic: " << grad_elements.size() << " gradient sizes for "
                                 << placement.degrees().pp << " pipeline stages");
  return {predicted_dim(placement.across, placement, options, grad_elements, tree_threshold_bytes),
          predicted_dim(placement.inside, placement, options, grad_elements, tree_threshold_bytes)};
}

LinkCosts measure_link_costs(coll::Communicator& world, int repetitions) {
  BOOK_CHECK(world.size() == 4,
             "measure_link_costs: needs the 4 ranks of 2 nodes x 2, got " << world.size());
  constexpr std::size_t kSmall = 8, kLarge = 1 << 20;
  LinkCosts c;
  c.shm_alpha = ping_pong(world, 1, kSmall, repetitions);
  c.shm_bytes_per_s =
      kLarge / std::max(1e-9, ping_pong(world, 1, kLarge, repetitions) - c.shm_alpha);
  c.link_alpha = ping_pong(world, 2, kSmall, repetitions);
  c.link_bytes_per_s =
      kLarge / std::max(1e-9, ping_pong(world, 2, kLarge, repetitions) - c.link_alpha);
  return c;
}

double thread_reference_loss(const Placement& placement, const PlacementOptions& options) {
  const std::vector<train::Batch> all = micro_batches_of(placement, options);
  const Schedule schedule = make_schedule("1f1b", shape_of(placement, options));
  double loss = 0;
  std::mutex mutex;
  coll::run_ranks(4, [&](coll::Communicator& world) {
    Rank3D<float> rank(world, placement.degrees(), options.config, options.batch, schedule.shape,
                       options.seed);
    const RankResult r = rank.step(
        schedule, replica_slice(all, rank.grid().coordinates().dp, options.micro_batches));
    const std::lock_guard<std::mutex> lock(mutex);
    if (world.rank() == 0) loss = r.loss;
  });
  return loss;
}

std::vector<PlacementResult> measure_placements(coll::Communicator& world,
                                                const coll::ClusterLayout& layout,
                                                const PlacementOptions& options,
                                                LinkCosts* costs_out) {
  check_2x2(world.size(), layout);
  BOOK_CHECK(options.repetitions >= 1 && options.micro_batches >= 1 && options.batch >= 1,
             "measure_placements: repetitions, micro-batches and batch must be at least 1, got "
                 << options.repetitions << ", " << options.micro_batches << ", " << options.batch);
  const std::vector<Placement> placements = placements_2x2();
  const std::size_t n = placements.size();
  const int m = options.micro_batches;

  // Every placement's rank, over its permuted world, built once (check_3d refuses bad degrees
  // on every rank before a message is sent).
  std::vector<std::unique_ptr<coll::Communicator>> worlds;
  std::vector<std::unique_ptr<Rank3D<float>>> ranks;
  std::vector<std::vector<train::Batch>> data;
  std::vector<Schedule> schedules;
  for (const Placement& p : placements) {
    worlds.push_back(permuted_world(world, p));
    schedules.push_back(make_schedule("1f1b", shape_of(p, options)));
    ranks.push_back(std::make_unique<Rank3D<float>>(*worlds.back(), p.degrees(), options.config,
                                                    options.batch, schedules.back().shape,
                                                    options.seed));
    data.push_back(micro_batches_of(p, options));
  }
  auto step = [&](std::size_t i) {
    Rank3D<float>& rank = *ranks[i];
    return rank.step(schedules[i], replica_slice(data[i], rank.grid().coordinates().dp, m));
  };

  std::vector<PlacementResult> results(n);
  // One counted step per placement (also the warm-up): this rank's sends in each group.
  std::vector<double> per_rank(n * 4, 0.0), grads(n * 2, 0.0), loss(n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    coll::ProcessGrid& grid = ranks[i]->grid();
    for (Dim dim : {Dim::kTp, Dim::kDp, Dim::kPp}) group_of(grid, dim).reset_counters();
    world.barrier();
    loss[i] = step(i).loss;
    const coll::Counters& across = group_of(grid, placements[i].across).counters();
    const coll::Counters& inside = group_of(grid, placements[i].inside).counters();
    per_rank[4 * i + 0] = static_cast<double>(across.messages_sent);
    per_rank[4 * i + 1] = static_cast<double>(across.bytes_sent);
    per_rank[4 * i + 2] = static_cast<double>(inside.messages_sent);
    per_rank[4 * i + 3] = static_cast<double>(inside.bytes_sent);
    std::uint64_t elements = 0;
    for (const auto& chunk : ranks[i]->chunks()) elements += chunk->grads().size();
    grads[2 * i + grid.coordinates().pp] = static_cast<double>(elements);
  }
  std::vector<double> sums = per_rank;  // every rank's, added: exact below 2^53
  reduce_all(world, sums, coll::ReduceOp::kSum);
  reduce_all(world, grads, coll::ReduceOp::kMax);
  reduce_all(world, loss, coll::ReduceOp::kMax);  // the same on every rank

  // The timed rounds: each placement once per round, so a slow moment of the machine touches
  // every placement alike.
  std::vector<double> times(n * options.repetitions, 0.0);
  for (int r = 0; r < options.repetitions; ++r)
    for (std::size_t i = 0; i < n; ++i) {
      world.barrier();
      Timer timer;
      step(i);
      world.barrier();
      times[r * n + i] = timer.seconds();
    }
  reduce_all(world, times, coll::ReduceOp::kMax);

  // The links' α and B.
  const LinkCosts costs = measure_link_costs(world);
  if (costs_out) *costs_out = costs;
  // One micro-batch on one device, timed once for all placements (the median of 9 steps over
  // the first grid's m micro-batches, averaged over the ranks, which all run it at once).
  std::vector<double> per_micro_batch(1, 0.0);
  {
    train::Model<float> whole(options.config, options.batch);
    whole.init(options.seed);
    world.barrier();
    per_micro_batch[0] =
        median_seconds([&] { single_device_step(whole, std::span(data[0]).first(m)); }, 9) / m;
  }
  reduce_all(world, per_micro_batch, coll::ReduceOp::kAvg);

  // α-β: this rank's messages and bytes on each link, serialised; the slowest rank sets it.
  std::vector<double> comm(n, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    comm[i] = per_rank[4 * i + 0] * costs.link_alpha +
              per_rank[4 * i + 1] / costs.link_bytes_per_s + per_rank[4 * i + 2] * costs.shm_alpha +
              per_rank[4 * i + 3] / costs.shm_bytes_per_s;
  reduce_all(world, comm, coll::ReduceOp::kMax);

  for (std::size_t i = 0; i < n; ++i) {
    PlacementResult& out = results[i];
    out.placement = placements[i];
    std::vector<double> mine;
    for (int r = 0; r < options.repetitions; ++r) mine.push_back(times[r * n + i]);
    out.median_s = median(mine);
    out.min_s = *std::min_element(mine.begin(), mine.end());
    out.max_s = *std::max_element(mine.begin(), mine.end());
    out.counted.across = {static_cast<std::uint64_t>(sums[4 * i + 0]),
                          static_cast<std::uint64_t>(sums[4 * i + 1])};
    out.counted.inside = {static_cast<std::uint64_t>(sums[4 * i + 2]),
                          static_cast<std::uint64_t>(sums[4 * i + 3])};
    const int pp = placements[i].degrees().pp;
    std::vector<std::uint64_t> grad_elements;
    for (int s = 0; s < pp; ++s)
      grad_elements.push_back(static_cast<std::uint64_t>(grads[2 * i + s]));
    out.predicted =
        predict_traffic(placements[i], options, grad_elements, world.tree_threshold_bytes());
    out.loss = loss[i];
    out.micro_batch_s = per_micro_batch[0];
    out.compute_s = per_micro_batch[0] * placements[i].degrees().dp * m / 4 * (m + pp - 1) / m;
    out.predicted_s = out.compute_s + comm[i];
  }
  auto rank_by = [&](auto key, auto set) {
    std::vector<std::size_t> idx(n);
    std::iota(idx.begin(), idx.end(), 0);
    std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
      return key(results[a]) < key(results[b]);
    });
    for (std::size_t k = 0; k < n; ++k) set(results[idx[k]], static_cast<int>(k) + 1);
  };
  rank_by([](const PlacementResult& r) { return r.median_s; },
          [](PlacementResult& r, int k) { r.measured_rank = k; });
  rank_by([](const PlacementResult& r) { return r.predicted_s; },
          [](PlacementResult& r, int k) { r.predicted_rank = k; });
  return results;
}

}  // namespace book::pp
