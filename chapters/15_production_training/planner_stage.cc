// bazel run -c opt //chapters/15_production_training:planner [-- --help]
//
// Planning a 3D layout (planner.h): the two worked cases (Llama-2 7B on one node of 8 H100s,
// Llama-2 70B on eight), each as a ranked table with a sentence per top plan saying why it is
// ahead of the next; or, with --model, one case of the reader's. Arithmetic only: no training,
// a second to run. Writes every plan to results/ch15_planner_<model>_<nodes>n[_zeroK].csv.
// Under the namespace cluster, --cluster holds the planner against measured placements:
//   tools/cluster/cluster.sh run -- $(readlink -f bazel-bin/.../planner) --cluster
#include <algorithm>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "chapters/15_production_training/planner.h"
#include "chapters/15_production_training/planner_cluster.h"
#include "common/flags.h"
#include "common/machine_load.h"
#include "common/main.h"
#include "common/table.h"

namespace {

using namespace book;
using namespace book::prod;

std::string gib(double bytes) { return fixed(bytes / (1024.0 * 1024 * 1024), 1); }
std::string ms(double seconds) { return fixed(1e3 * seconds, 1); }

std::string crossing(const Plan& p) {
  std::string out;
  if (p.tp_crosses) out += "tp ";
  if (p.pp_crosses) out += "pp ";
  if (p.dp_crosses) out += "dp ";
  return out.empty() ? "none" : out.substr(0, out.size() - 1);
}

std::string cuts(const Plan& p) {
  std::string out;
  for (int c : p.boundaries) out += (out.empty() ? "" : " ") + std::to_string(c);
  return out;
}

std::vector<Plan> plan_case(const PlanInput& input, int top) {
  const std::vector<Plan> plans = rank_plans(input);
  const ClusterSpec& c = input.cluster;
  std::cout << "\n## " << input.shape.name << " on " << c.name << ", global batch "
            << input.global_batch << " x " << input.seq << " tokens, "
            << dtype_name(input.precision) << ", " << mem::optimizer_name(input.optimizer)
            << ", recompute " << mem::recomputation_name(input.recompute) << ", ZeRO up to "
            << zero::stage_name(input.zero_stages.back()) << "\n\n"
            << "Cluster figures: " << c.source << ".\n"
            << plans.size() << " feasible plans; the best of the first " << top
            << " layouts (times per optimizer step, modelled; the rank is among all plans):\n\n";
  // The table: the first `top` layouts (degrees, placement), each with its best micro-batch and
  // ZeRO stage (the model gives b no say in the compute: it ties); every plan goes to the CSV.
  Table table({"rank", "plan", "crosses nodes", "GiB (ch09)", "GiB (stages)", "stage cuts",
               "compute ms", "TP ms", "PP ms", "bubble ms", "DP ms", "step ms", "dominant"});
  Table csv(table.columns());
  std::vector<std::size_t> layouts;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < plans.size(); ++i) {
    const Plan& p = plans[i];
    double largest = 0;
    for (double b : p.stage_bytes) largest = std::max(largest, b);
    std::vector<std::string> row = {std::to_string(i + 1),   p.name(),     crossing(p),
                                    gib(p.calculator_bytes), gib(largest), cuts(p),
                                    ms(p.compute_s),         ms(p.tp_s),   ms(p.pp_s),
                                    ms(p.bubble_s),          ms(p.dp_s),   ms(p.step_s),
                                    term_name(p.dominant())};
    const std::string key = std::to_string(p.dp) + "/" + std::to_string(p.tp) + "/" +
                            std::to_string(p.pp) + "/" + crossing(p) + "/" +
                            std::to_string(p.dp_per_node);
    if (seen.insert(key).second) {
      layouts.push_back(i);
      if (static_cast<int>(layouts.size()) <= top) table.add_row(row);
    }
    csv.add_row(row);
  }
  std::cout << table.markdown() << "\n";
  // Why each of the first three layouts is ahead of the next one down.
  for (std::size_t k = 0; k + 1 < layouts.size() && k < 3; ++k)
    std::cout << "- #" << layouts[k] + 1 << " before #" << layouts[k + 1] + 1 << ": "
              << why_ahead(plans[layouts[k]], plans[layouts[k + 1]]) << ".\n";
  // The first plan of each kind the decision order distinguishes, if it is not already above.
  const auto first_where = [&](auto predicate, const char* what) {
    for (std::size_t i = 0; i < plans.size(); ++i)
      if (predicate(plans[i])) {
        if (i == 0) {
          std::cout << "- The winner is the best plan " << what << ".\n";
          return;
        }
        std::cout << "- The best plan " << what << " is #" << i + 1 << ", " << plans[i].name()
                  << ", " << ms(plans[i].step_s) << " ms: " << why_ahead(plans[0], plans[i])
                  << ".\n";
        return;
      }
  };
  first_where([](const Plan& p) { return p.tp_crosses; }, "whose TP group crosses nodes");
  first_where([](const Plan& p) { return p.pp > 1 && p.tp == 1; }, "with PP and no TP");
  first_where([](const Plan& p) { return p.tp == 1 && p.pp == 1; }, "with DP alone");
  const std::string stem = results_dir() + "/ch15_planner_" + input.shape.name + "_" +
                           std::to_string(c.nodes) + "n" +
                           (input.zero_stages.back() == zero::Stage::kZero3
                                ? ""
                                : std::string("_") + zero::stage_name(input.zero_stages.back()));
  csv.write_csv(stem + ".csv");
  // For the picture (planner.gp): what each shown layout, and the best one whose TP group
  // crosses nodes, adds to the least compute of any plan, term by term, in seconds.
  std::vector<std::size_t> drawn(layouts.begin(),
                                 layouts.begin() + std::min<std::size_t>(top, layouts.size()));
  for (std::size_t i = 0; i < plans.size(); ++i)
    if (plans[i].tp_crosses) {
      if (std::find(drawn.begin(), drawn.end(), i) == drawn.end()) drawn.push_back(i);
      break;
    }
  double least_compute = plans[0].compute_s;
  for (const Plan& p : plans) least_compute = std::min(least_compute, p.compute_s);
  Table terms(
      {"plan", "compute above the least", "TP all-reduces", "PP sends", "bubble", "DP all-reduce"});
  for (std::size_t i : drawn) {
    const Plan& p = plans[i];
    const std::string name = p.name();
    const std::size_t order = name.find('[');
    terms.add_row({"(" + std::to_string(i + 1) + ") dp" + std::to_string(p.dp) + " tp" +
                       std::to_string(p.tp) + " pp" + std::to_string(p.pp) + " z" +
                       std::to_string(static_cast<int>(p.zero)) +
                       (order == std::string::npos ? "" : " " + name.substr(order)),
                   fixed(p.compute_s - least_compute, 3), fixed(p.tp_s, 3), fixed(p.pp_s, 3),
                   fixed(p.bubble_s, 3), fixed(p.dp_s, 3)});
  }
  terms.write_csv(stem + "_terms.csv");
  std::cout << "\nwritten: " << stem << ".csv, " << stem << "_terms.csv (least compute "
            << fixed(least_compute, 1) << " s)\n";
  return plans;
}

int body(int argc, char** argv) {
  std::string model;
  int nodes = 1;
  int batch = 512;
  int seq = 4096;
  int top = 10;
  std::string recompute = "selective";
  int max_zero = 3;
  bool tour = false;
  Flags flags("planner",
              "ranks the feasible (dp, tp, pp, placement, micro-batch, ZeRO) plans of a model on "
              "H100 nodes by a step-time model; without --model, the chapter's two worked cases");
  flags.add("model", &model, "a chapter 9 preset (llama2-7b, llama2-70b, gpt3-175b, ...)");
  flags.add("nodes", &nodes, "nodes of 8 H100s").range(1, 1024);
  flags.add("batch", &batch, "global batch, sequences per optimizer step").range(1, 1 << 24);
  flags.add("seq", &seq, "tokens per sequence").range(1, 1 << 20);
  flags.add("top", &top, "plans printed").range(1, 100000);
  flags
      .add("recompute", &recompute,
           "activation recomputation (selective: the attention core, as FlashAttention does)")
      .choices({"none", "selective", "full"});
  flags.add("max-zero", &max_zero, "highest ZeRO stage tried (1: Megatron-LM's classic 3D)")
      .range(0, 3);
  flags.add("tour", &tour, "the tour's lines too (the run is the same: arithmetic, a second)");
  bool cluster = false;
  flags.add("cluster", &cluster,
            "under tools/cluster/cluster.sh (2 nodes x 2 ranks): the planner's ranking of chapter "
            "8's 2 x 2 placements against their measured step times");
  flags.parse(argc, argv);
  if (cluster) return run_planner_cluster(argc, argv, tour);
  print_machine_load();
  std::vector<PlanInput> cases;
  const auto make = [&](const std::string& name, int n) {
    PlanInput in;
    in.shape = mem::preset(name);
    in.seq = seq;
    in.global_batch = batch;
    in.recompute = mem::parse_recompute(recompute);
    in.cluster = h100_cluster(n);
    in.zero_stages.resize(max_zero + 1);
    return in;
  };
  if (!model.empty()) {
    cases.push_back(make(model, nodes));
  } else {
    cases.push_back(make("llama2-7b", 1));
    cases.push_back(make("llama2-70b", 8));
  }
  std::cout << "# Planning a 3D layout: does it fit on one device, which links are fast, how "
               "large is the cluster\n";
  std::vector<std::vector<Plan>> ranked;
  for (const PlanInput& in : cases) ranked.push_back(plan_case(in, top));
  if (tour && model.empty()) {
    const Plan& small = ranked[0][0];
    std::cout << "tour: 15 | planner, Llama-2 7B on 8 H100s: the best plan (modelled) | "
              << small.name() << " | a model that fits (ZeRO-1 shards its optimizer state) "
              << "takes DP alone\n";
    const std::vector<Plan>& big = ranked[1];
    for (const Plan& p : big)
      if (p.tp_crosses) {
        std::cout << "tour: 15 | planner, Llama-2 70B on 64 H100s: TP across nodes against the "
                     "best plan (modelled) | "
                  << fixed(1e2 * (p.step_s / big[0].step_s - 1), 1) << "% slower ("
                  << fixed(p.step_s, 1) << " s against " << fixed(big[0].step_s, 1)
                  << " s) | TP stays inside the NVLink node\n";
        break;
      }
    std::cout << "tour-config: 15 | planner --tour: the chapter's worked cases, unchanged "
                 "(arithmetic on sourced H100 figures, no training)\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return book::run_main(argc, argv, body); }
