// Graded tests of pp.partition_layers: the dynamic programme's largest stage cost equals brute
// force over every contiguous split (small n, integer-valued costs so sums are exact), its cuts
// achieve it, the embedding and head weigh on the first and last stage, and bad input is refused.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "chapters/08_pipeline_parallel/partition.h"
#include "common/rng.h"
#include "common/testing/exercise.h"
#include "common/testing/expect_error.h"

namespace book::pp {
namespace {

// The smallest largest stage cost over every split of `costs` into `stages` non-empty parts.
double brute_force(const std::vector<double>& costs, int stages, double embed, double head) {
  const int n = static_cast<int>(costs.size());
  double best = std::numeric_limits<double>::infinity();
  std::vector<int> cuts = {0};
  std::function<void(int)> place = [&](int from) {
    if (static_cast<int>(cuts.size()) == stages) {
      cuts.push_back(n);
      const auto c = stage_costs(costs, cuts, embed, head);
      best = std::min(best, *std::max_element(c.begin(), c.end()));
      cuts.pop_back();
      return;
    }
    for (int cut = from + 1; cut <= n - (stages - static_cast<int>(cuts.size())); ++cut) {
      cuts.push_back(cut);
      place(cut);
      cuts.pop_back();
    }
  };
  place(0);
  return best;
}

std::string show(const std::vector<double>& v) {
  std::string s;
  for (double x : v) s += std::to_string(static_cast<int>(x)) + " ";
  return s;
}

EXERCISE_TEST("pp.partition_layers", PartitionLayers, EqualsBruteForce) {
  Rng rng(808);
  for (int trial = 0; trial < 300; ++trial) {
    const int n = static_cast<int>(rng.uniform_int(1, 9));
    const int stages = static_cast<int>(rng.uniform_int(1, std::min(n, 5)));
    std::vector<double> costs(n);
    for (double& c : costs) c = static_cast<double>(rng.uniform_int(0, 20));
    const double embed = static_cast<double>(rng.uniform_int(0, 30));
    const double head = static_cast<double>(rng.uniform_int(0, 30));
    const double want = brute_force(costs, stages, embed, head);
    Partition got{std::vector<int>(stages + 1, -7), std::numeric_limits<double>::quiet_NaN()};
    got = partition_layers(costs, stages, embed, head);
    const std::string input = "costs " + show(costs) + "stages " + std::to_string(stages) +
                              " embed " + std::to_string(embed) + " head " + std::to_string(head);
    ASSERT_EQ(got.largest, want) << input;
    ASSERT_EQ(static_cast<int>(got.boundaries.size()), stages + 1) << input;
    const auto c = stage_costs(costs, got.boundaries, embed, head);  // checks the cuts too
    ASSERT_EQ(*std::max_element(c.begin(), c.end()), want) << input << ": the cuts must achieve it";
  }
}

EXERCISE_TEST("pp.partition_layers", PartitionLayers, HeavyHeadGetsAShortLastStage) {
  // Eight equal layers and a loss head as heavy as two of them: counting layers (4 + 4) gives
  // the last stage 6 units; the balanced split gives it three layers, 5 units on each stage.
  const std::vector<double> layers(8, 1.0);
  const Partition even = partition_layers(layers, 2);
  EXPECT_EQ(even.boundaries, (std::vector<int>{0, 4, 8}));
  EXPECT_EQ(even.largest, 4.0);
  const Partition weighed = partition_layers(layers, 2, 0.0, 2.0);
  EXPECT_EQ(weighed.boundaries, (std::vector<int>{0, 5, 8}));
  EXPECT_EQ(weighed.largest, 5.0);
  const auto counted = stage_costs(layers, {0, 4, 8}, 0.0, 2.0);
  EXPECT_EQ(*std::max_element(counted.begin(), counted.end()), 6.0);
}

EXERCISE_TEST("pp.partition_layers", PartitionLayers, RefusesBadInput) {
  const std::vector<double> three = {1, 2, 3};
  testing::expect_error([&] { partition_layers(three, 4); },
                        {"fewer layers than stages", "3 layers", "4 stages"});
  testing::expect_error([&] { partition_layers(three, 0); }, "stages must be at least 1, got 0");
  const std::vector<double> negative = {1, -2, 3};
  testing::expect_error([&] { partition_layers(negative, 2); }, {"layer 1", "-2"});
  const std::vector<double> nan = {1, std::nan(""), 3};
  testing::expect_error([&] { partition_layers(nan, 2); }, {"layer 1", "finite"});
  // Issue 36: each cost finite, their sum not (it used to return largest = inf).
  const std::vector<double> huge = {1e308, 1e308, 1e308};
  testing::expect_error([&] { partition_layers(huge, 2); }, "sum to more than a double holds");
}

}  // namespace
}  // namespace book::pp
