// The 3D planner: enumerate (dp, tp, pp, placement, b, ZeRO), keep what fits, rank by the
// step-time model of planner.h.
#include "chapters/15_production_training/planner.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <sstream>

#include "chapters/07_tensor_parallel/bandwidth_model.h"
#include "common/check.h"

namespace book::prod {
namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

void check_link(const char* which, const ddp::Link& link) {
  BOOK_CHECK(std::isfinite(link.alpha_s) && link.alpha_s >= 0,
             "rank_plans: the " << which << " link's alpha must be finite and >= 0 seconds, got "
                                << link.alpha_s);
  BOOK_CHECK(std::isfinite(link.bytes_per_s) && link.bytes_per_s > 0,
             "rank_plans: the " << which << " link's bandwidth must be positive and finite, got "
                                << link.bytes_per_s
                                << " bytes/s; give a measured or datasheet "
                                   "figure");
}

void check_input(const PlanInput& in) {
  const ClusterSpec& c = in.cluster;
  BOOK_CHECK(c.nodes >= 1 && c.devices_per_node >= 1, "rank_plans: the cluster has no devices ("
                                                          << c.nodes << " nodes of "
                                                          << c.devices_per_node
                                                          << "); give at least one node of one");
  BOOK_CHECK(static_cast<std::int64_t>(c.nodes) * c.devices_per_node <= (1 << 20),
             "rank_plans: " << c.nodes << " x " << c.devices_per_node
                            << " devices is more than the 2^20 the planner enumerates");
  BOOK_CHECK(std::isfinite(c.memory_bytes) && c.memory_bytes > 0,
             "rank_plans: a device's memory must be positive, got " << c.memory_bytes << " bytes");
  BOOK_CHECK(std::isfinite(c.flops_per_s) && c.flops_per_s > 0,
             "rank_plans: a device's sustained FLOP/s must be positive, got " << c.flops_per_s);
  check_link("intra-node", c.intra);
  check_link("inter-node", c.inter);
  BOOK_CHECK(in.global_batch >= 1,
             "rank_plans: the global batch must be at least 1 sequence, got " << in.global_batch);
  BOOK_CHECK(!in.micro_batch_sizes.empty(), "rank_plans: no micro-batch size to try; give one");
  for (int b : in.micro_batch_sizes)
    BOOK_CHECK(b >= 1, "rank_plans: micro-batch sizes must be at least 1, got " << b);
  BOOK_CHECK(!in.zero_stages.empty(), "rank_plans: no ZeRO stage to try; give kDdp at least");
}

// How a group of degree d whose inner groups span `stride` ranks sits on nodes of g: members per
// node, and whether it spans nodes. Irregular layouts (neither divides the other) count every
// member as on its own node, the slow case.
struct GroupLayout {
  int per_node = 1;
  bool crosses = false;
};

GroupLayout layout_of(int degree, std::int64_t stride, int g) {
  GroupLayout l;
  if (stride < g && g % stride == 0)
    l.per_node = static_cast<int>(std::min<std::int64_t>(degree, g / stride));
  l.crosses = degree > l.per_node;
  return l;
}

ddp::Cluster group_cluster(const ClusterSpec& c, const GroupLayout& l) {
  ddp::Cluster out;
  out.intra = c.intra;
  out.inter = c.inter;
  out.ranks_per_node = l.per_node;
  out.hierarchical = true;
  return out;
}

int degree_of(const Plan& p, Dim d) { return d == Dim::kTp ? p.tp : d == Dim::kDp ? p.dp : p.pp; }

const char* dim_name(Dim d) { return d == Dim::kTp ? "tp" : d == Dim::kDp ? "dp" : "pp"; }

// The order with degree-1 dimensions dropped: plans that differ only there are the same.
std::string order_key(const Plan& p) {
  std::string key;
  for (Dim d : p.order)
    if (degree_of(p, d) > 1) key += std::string(key.empty() ? "" : "-") + dim_name(d);
  return key;
}

std::string ms(double seconds) {
  std::ostringstream out;
  out.setf(std::ios::fixed);
  out.precision(seconds < 0.1 ? 2 : 0);
  out << 1e3 * seconds << " ms";
  return out.str();
}

// Bytes as a reader says them: GiB, MiB or bytes, one decimal.
std::string bytes_text(double bytes) {
  std::ostringstream out;
  out.setf(std::ios::fixed);
  out.precision(1);
  if (bytes >= kGiB)
    out << bytes / kGiB << " GiB";
  else if (bytes >= 1024.0 * 1024)
    out << bytes / (1024.0 * 1024) << " MiB";
  else
    out << std::llround(bytes) << " bytes";
  return out.str();
}

std::string fixed_gib(std::uint64_t bytes) {
  std::ostringstream out;
  out.setf(std::ios::fixed);
  out.precision(1);
  out << static_cast<double>(bytes) / kGiB << " GiB";
  return out.str();
}

}  // namespace

const char* term_name(Term t) {
  switch (t) {
    case Term::kCompute:
      return "compute";
    case Term::kTensorParallel:
      return "TP all-reduces";
    case Term::kPipelineSends:
      return "PP sends";
    case Term::kBubble:
      return "bubble";
    case Term::kDataParallel:
      return "DP all-reduce";
  }
  return "?";
}

double Plan::term(Term t) const {
  switch (t) {
    case Term::kCompute:
      return compute_s;
    case Term::kTensorParallel:
      return tp_s;
    case Term::kPipelineSends:
      return pp_s;
    case Term::kBubble:
      return bubble_s;
    case Term::kDataParallel:
      return dp_s;
  }
  return 0;
}

constexpr std::array<Term, 5> kTerms = {Term::kCompute, Term::kTensorParallel, Term::kPipelineSends,
                                        Term::kBubble, Term::kDataParallel};

Term Plan::dominant() const {
  Term best = Term::kCompute;
  for (Term t : kTerms)
    if (term(t) > term(best)) best = t;
  return best;
}

std::string Plan::name() const {
  std::ostringstream out;
  out << "dp" << dp << " tp" << tp << " pp" << pp << " b" << micro_batch << " "
      << zero::stage_name(zero);
  const std::string key = order_key(*this);
  if (key.find('-') != std::string::npos) out << " [" << key << "]";
  return out.str();
}

namespace {

// Everything about one (dp, tp, pp, order, b, zero) but the ranking.
struct Candidate {
  Plan plan;
  mem::Setup setup;
};

// Fills the plan's memory and times; false when it does not fit (needed: the bytes it needs).
bool evaluate(const PlanInput& in, Candidate& c, double& needed) {
  Plan& p = c.plan;
  const ClusterSpec& cl = in.cluster;
  const mem::ModelShape& shape = in.shape;
  const mem::Breakdown breakdown = mem::calculate(c.setup);
  p.calculator_bytes = breakdown.total();
  if (static_cast<double>(p.calculator_bytes) > cl.memory_bytes) {
    needed = static_cast<double>(p.calculator_bytes);
    return false;
  }

  // Where each group sits.
  GroupLayout tp_l, dp_l, pp_l;
  std::int64_t stride = 1;
  for (Dim d : p.order) {
    const GroupLayout l = layout_of(degree_of(p, d), stride, cl.devices_per_node);
    (d == Dim::kTp ? tp_l : d == Dim::kDp ? dp_l : pp_l) = l;
    stride *= degree_of(p, d);
  }
  p.tp_crosses = tp_l.crosses, p.dp_crosses = dp_l.crosses, p.pp_crosses = pp_l.crosses;
  p.dp_per_node = dp_l.per_node;

  // Per layer and micro-batch: FLOPs (chapter 7) and TP's four all-reduces of s·b·h (chapter 5).
  tp::TransformerShape ts;
  ts.name = shape.name;
  ts.hidden = shape.d_model, ts.heads = shape.n_head, ts.layers = shape.n_layer;
  ts.sequence = static_cast<double>(in.seq), ts.micro_batch = p.micro_batch;
  ts.bytes_per_element = static_cast<double>(dtype_size(in.precision));
  const double recompute =
      mem::hardware_flops_per_token(1, in.recompute) / mem::model_flops_per_token(1);
  const double layer_compute = tp::layer_flops(ts) * recompute / p.tp / cl.flops_per_s;
  const double activation = ts.sequence * ts.micro_batch * ts.hidden * ts.bytes_per_element;
  const double layer_tp =
      p.tp > 1 ? 4 * ddp::all_reduce_seconds(p.tp, activation, group_cluster(cl, tp_l)) : 0;
  const double head_compute =
      6.0 * ts.micro_batch * ts.sequence * ts.hidden * shape.vocab_size / p.tp / cl.flops_per_s;

  // Memory per stage, from the calculator's own figures: bytes of model state per parameter the
  // rank holds (ZeRO and the optimizer included), activations per layer and micro-batch.
  const mem::ParameterBreakdown params = mem::parameters_of(shape);
  const double per_param =
      static_cast<double>(breakdown.parameters + breakdown.gradients + breakdown.master_weights +
                          breakdown.optimizer_moments) /
      static_cast<double>(breakdown.rank_parameters);
  const double layer_params =
      static_cast<double>((params.layer_matrices + p.tp - 1) / p.tp + params.layer_norms);
  const double embed_params = std::ceil(static_cast<double>(params.embedding) / p.tp);
  const double head_params = std::ceil(static_cast<double>(params.head) / p.tp);
  mem::LayerActivationInputs ai;
  ai.seq = in.seq, ai.micro_batch = p.micro_batch, ai.hidden = shape.d_model;
  ai.heads = shape.n_head, ai.tensor_parallel = p.tp, ai.recompute = in.recompute;
  const double sb = ts.sequence * ts.micro_batch;
  StageMemory memory;
  memory.layer_state_bytes.assign(shape.n_layer, per_param * layer_params);
  memory.layer_activation_bytes.assign(shape.n_layer,
                                       static_cast<double>(mem::activation_bytes_per_layer(ai)));
  // As the calculator counts them: the embedding's dropout mask for p micro-batches, the output
  // layer's 4sb(h + v)/t on the stage with the head.
  memory.first_bytes = per_param * embed_params + sb * ts.hidden * p.pp / p.tp;
  memory.last_bytes = per_param * head_params + 4 * sb * (ts.hidden + shape.vocab_size) / p.tp;
  memory.fixed_bytes = static_cast<double>(breakdown.communication + breakdown.overhead);
  memory.limit = cl.memory_bytes;

  const std::vector<double> costs(shape.n_layer, layer_compute + layer_tp);
  const std::optional<pp::Partition> part =
      partition_within_memory(costs, p.pp, 0, head_compute, memory);
  if (!part) {
    const std::vector<double> even = stage_bytes(memory, pp::even_boundaries(shape.n_layer, p.pp));
    needed = *std::max_element(even.begin(), even.end());
    return false;
  }
  p.boundaries = part->boundaries;
  p.stage_bytes = stage_bytes(memory, p.boundaries);

  // The slowest stage sets the slot; split its cost into compute and TP.
  const std::vector<double> stage_cost = pp::stage_costs(costs, p.boundaries, 0, head_compute);
  const int slowest =
      static_cast<int>(std::max_element(stage_cost.begin(), stage_cost.end()) - stage_cost.begin());
  const int layers = p.boundaries[slowest + 1] - p.boundaries[slowest];
  const double slot_compute = layers * layer_compute + (slowest == p.pp - 1 ? head_compute : 0);
  const double slot_tp = layers * layer_tp;
  const ddp::Link& pp_link = pp_l.crosses ? cl.inter : cl.intra;
  const double slot_pp =
      p.pp > 1 ? 2 * pp_link.alpha_s + tp::pipeline_bytes_per_boundary(ts) / pp_link.bytes_per_s
               : 0;
  const double m = static_cast<double>(p.micro_batches);
  p.compute_s = m * slot_compute;
  p.tp_s = m * slot_tp;
  p.pp_s = m * slot_pp;
  p.bubble_s = (p.pp - 1) * (slot_compute + slot_tp + slot_pp);

  // DP: the heaviest stage's gradients, in the training precision.
  double stage_params = 0;
  for (int s = 0; s < p.pp; ++s)
    stage_params =
        std::max(stage_params, (p.boundaries[s + 1] - p.boundaries[s]) * layer_params +
                                   (s == 0 ? embed_params : 0) + (s == p.pp - 1 ? head_params : 0));
  const double gradient_bytes = stage_params * ts.bytes_per_element;
  p.dp_s = p.dp > 1 ? ddp::all_reduce_seconds(p.dp, gradient_bytes, group_cluster(cl, dp_l)) *
                          (p.zero == zero::Stage::kZero3 ? 1.5 : 1.0)
                    : 0;
  p.step_s = p.compute_s + p.tp_s + p.pp_s + p.bubble_s + p.dp_s;
  return true;
}

std::vector<int> divisors(int n) {
  std::vector<int> out;
  for (int d = 1; d <= n; ++d)
    if (n % d == 0) out.push_back(d);
  return out;
}

}  // namespace

std::vector<Plan> rank_plans(const PlanInput& in) {
  check_input(in);
  mem::validate(in.shape);
  const mem::ModelShape& shape = in.shape;
  const int world = in.cluster.nodes * in.cluster.devices_per_node;
  std::vector<Plan> plans;
  std::set<std::string> seen;
  bool any_divisible = false, any_grid = false;
  double fewest_needed = std::numeric_limits<double>::infinity();
  std::string fewest_plan;
  std::array<Dim, 3> order{Dim::kTp, Dim::kDp, Dim::kPp};
  std::vector<std::array<Dim, 3>> orders;
  std::sort(order.begin(), order.end());
  do orders.push_back(order);
  while (std::next_permutation(order.begin(), order.end()));

  for (int tp : divisors(world)) {
    if (shape.n_head % tp || shape.n_kv_head % tp || shape.d_model % tp) continue;
    for (int pp : divisors(world / tp)) {
      if (shape.n_layer % pp) continue;
      any_grid = true;
      const int dp = world / tp / pp;
      std::set<std::string> placed;
      for (const std::array<Dim, 3>& o : orders) {
        Plan base;
        base.dp = dp, base.tp = tp, base.pp = pp, base.order = o;
        if (!placed.insert(order_key(base)).second) continue;
        for (zero::Stage stage :
             std::set<zero::Stage>(in.zero_stages.begin(), in.zero_stages.end())) {
          if (dp == 1 && stage != zero::Stage::kDdp) continue;  // nothing to shard over
          for (int b : std::set<int>(in.micro_batch_sizes.begin(), in.micro_batch_sizes.end())) {
            if (in.global_batch % (static_cast<std::int64_t>(dp) * b) != 0) continue;
            any_divisible = true;
            Candidate c;
            c.plan = base;
            c.plan.micro_batch = b;
            c.plan.micro_batches = in.global_batch / (static_cast<std::int64_t>(dp) * b);
            c.plan.zero = stage;
            c.setup.shape = shape;
            c.setup.parallel = {dp, tp, pp, stage, false};
            c.setup.precision = in.precision;
            c.setup.seq = in.seq;
            c.setup.micro_batch = b;
            c.setup.recompute = in.recompute;
            c.setup.optimizer = in.optimizer;
            c.setup.overhead_bytes = in.overhead_bytes;
            double needed = 0;
            if (evaluate(in, c, needed)) {
              // Orders that put the same groups across nodes are one plan: keep the first
              // (Megatron-LM's tp, dp, pp comes first).
              const Plan& p = c.plan;
              const std::string same =
                  std::to_string(dp) + "/" + std::to_string(tp) + "/" + std::to_string(pp) + "/" +
                  std::to_string(b) + "/" + zero::stage_name(stage) + "/" +
                  std::to_string(p.tp_crosses) + std::to_string(p.pp_crosses) +
                  std::to_string(p.dp_crosses) + "/" + std::to_string(p.dp_per_node);
              if (seen.insert(same).second) plans.push_back(std::move(c.plan));
            } else if (needed < fewest_needed) {
              fewest_needed = needed;
              fewest_plan = c.plan.name();
            }
          }
        }
      }
    }
  }
  BOOK_CHECK(any_grid, "rank_plans: no (tp, pp) of " << world << " devices fits " << shape.name
                                                     << ": tp must divide its " << shape.n_head
                                                     << " heads and pp its " << shape.n_layer
                                                     << " layers; change the device count");
  BOOK_CHECK(any_divisible, "rank_plans: the global batch of "
                                << in.global_batch
                                << " sequences is not divisible by dp x b for any dp and "
                                   "micro-batch size tried; use a batch that is a multiple of "
                                << world << " (the device count)");
  BOOK_CHECK(!plans.empty(), "rank_plans: " << shape.name << " fits nowhere on " << world
                                            << " devices: the lightest plan (" << fewest_plan
                                            << ") needs " << bytes_text(fewest_needed)
                                            << " per device, a device holds "
                                            << bytes_text(in.cluster.memory_bytes)
                                            << "; add devices, shard more (ZeRO-3), recompute "
                                               "activations or shorten the sequence");
  std::sort(plans.begin(), plans.end(), [](const Plan& a, const Plan& b) {
    if (a.step_s != b.step_s) return a.step_s < b.step_s;
    if (a.zero != b.zero) return a.zero < b.zero;
    if (a.calculator_bytes != b.calculator_bytes) return a.calculator_bytes < b.calculator_bytes;
    return a.name() < b.name();
  });
  return plans;
}

std::string why_ahead(const Plan& w, const Plan& n) {
  std::ostringstream out;
  Term biggest = Term::kCompute;
  double gain = -std::numeric_limits<double>::infinity();
  for (Term t : kTerms)
    if (n.term(t) - w.term(t) > gain) gain = n.term(t) - w.term(t), biggest = t;
  if (n.step_s - w.step_s <= 0 || gain <= 0) {
    out << w.name() << " ties with " << n.name() << " (" << ms(w.step_s)
        << " modelled); it comes first for its ";
    if (w.zero != n.zero)
      out << "lower ZeRO stage (fewer collectives to run)";
    else
      out << "smaller memory (" << fixed_gib(w.calculator_bytes) << " against "
          << fixed_gib(n.calculator_bytes) << ")";
    return out.str();
  }
  out << w.name() << " beats " << n.name() << " by " << ms(n.step_s - w.step_s) << ": "
      << term_name(biggest) << " " << ms(w.term(biggest)) << " against " << ms(n.term(biggest));
  switch (biggest) {
    case Term::kTensorParallel:
      if (n.tp_crosses && !w.tp_crosses)
        out << " (the other's TP all-reduces cross the inter-node link)";
      else
        out << " (tp " << w.tp << " against " << n.tp << ": four all-reduces per layer)";
      break;
    case Term::kPipelineSends:
      if (n.pp_crosses && !w.pp_crosses)
        out << " (the other's pipeline boundary crosses the inter-node link)";
      else
        out << " (pp " << w.pp << " against " << n.pp << ", m " << w.micro_batches << " against "
            << n.micro_batches << ")";
      break;
    case Term::kBubble:
      out << " (bubble (p-1)/(m+p-1): p " << w.pp << ", m " << w.micro_batches << " against p "
          << n.pp << ", m " << n.micro_batches << ")";
      break;
    case Term::kDataParallel:
      if (n.dp_crosses && !w.dp_crosses)
        out << " (the other's gradient all-reduce crosses the inter-node link)";
      else if (n.zero == zero::Stage::kZero3 && w.zero != zero::Stage::kZero3)
        out << " (ZeRO-3 gathers the parameters twice: 1.5x the all-reduce's bytes)";
      else if (w.dp == n.dp && w.dp_per_node > n.dp_per_node)
        out << " (" << w.dp_per_node << " of its " << w.dp << " DP ranks share a node against "
            << n.dp_per_node << ": the hierarchical all-reduce sends 1/" << w.dp_per_node
            << " of the gradients across nodes against 1/" << n.dp_per_node << ")";
      else
        out << " (dp " << w.dp << " against " << n.dp << ", each over its stage's gradients)";
      break;
    case Term::kCompute:
      if (n.pp > w.pp)
        out << " (the other's last stage also runs the LM head while the other stages wait";
      else
        out << " (its slowest stage does less";
      out << "; stages cut at";
      for (int c : w.boundaries) out << " " << c;
      out << " against";
      for (int c : n.boundaries) out << " " << c;
      out << ")";
      break;
  }
  return out.str();
}

ClusterSpec h100_cluster(int nodes) {
  const tp::Hardware hw;
  ClusterSpec c;
  c.name = std::to_string(nodes) + " x 8 H100 SXM";
  c.nodes = nodes;
  c.devices_per_node = 8;
  c.memory_bytes = 80e9;
  c.flops_per_s = 0.4 * hw.peak.value;
  c.intra = {5e-6, hw.nvlink.value};
  c.inter = {10e-6, hw.network.value};
  c.source = "80 GB HBM3 and " + hw.peak.source + " (40% sustained, as chapter 5 assumes); " +
             hw.nvlink.source + "; " + hw.network.source +
             "; alpha 5 us NVLink, 10 us InfiniBand (chapter 5's assumption)";
  return c;
}

}  // namespace book::prod
