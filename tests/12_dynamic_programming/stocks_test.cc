#include <algorithm>
#include <climits>

#include "chapters/12_dynamic_programming/stocks.h"
#include "common/testing/exercise.h"
#include "tests/12_dynamic_programming/inputs.h"

namespace book::dynprog {
namespace {

using testing::random_ints;
using testing::show;

// The rules of one stock problem, for the brute force.
struct Rules {
  int max_transactions = INT_MAX;  // buys allowed
  bool cooldown = false;           // no buy the day after a sell
  int fee = 0;                     // paid per sell
};

// Brute force: every sequence of buy / sell / wait decisions, one per day.
int best_trading(const std::vector<int>& prices, std::size_t day, bool holding, int buys_left,
                 bool cooling, const Rules& rules) {
  if (day == prices.size()) return 0;
  int best = best_trading(prices, day + 1, holding, buys_left, false, rules);  // wait
  if (holding)
    best =
        std::max(best, prices[day] - rules.fee +
                           best_trading(prices, day + 1, false, buys_left, rules.cooldown, rules));
  else if (buys_left > 0 && !cooling)
    best = std::max(
        best, -prices[day] + best_trading(prices, day + 1, true, buys_left - 1, false, rules));
  return best;
}

int brute_force(const std::vector<int>& prices, const Rules& rules) {
  return best_trading(prices, 0, false, rules.max_transactions, false, rules);
}

std::vector<int> random_prices(Rng& rng) {
  return random_ints(rng, rng.uniform_int(0, 10), 0, rng.uniform_int(1, 20));
}

EXERCISE_TEST("dp.121", BestTimeToBuyAndSellStock, ExamplesAndBruteForce) {
  EXPECT_EQ(max_profit_one({7, 1, 5, 3, 6, 4}), 5);
  EXPECT_EQ(max_profit_one({7, 6, 4, 3, 1}), 0) << "falling prices: do nothing";
  EXPECT_EQ(max_profit_one({}), 0);
  EXPECT_EQ(max_profit_one({3}), 0);
  Rng rng(121);
  for (int trial = 0; trial < 2000; ++trial) {
    const auto prices = random_prices(rng);
    ASSERT_EQ(max_profit_one(prices), brute_force(prices, {.max_transactions = 1}))
        << "prices = " << show(prices);
  }
}

EXERCISE_TEST("dp.122", BestTimeToBuyAndSellStockII, ExamplesAndBruteForce) {
  EXPECT_EQ(max_profit_many({7, 1, 5, 3, 6, 4}), 7);
  EXPECT_EQ(max_profit_many({1, 2, 3, 4, 5}), 4);
  EXPECT_EQ(max_profit_many({7, 6, 4, 3, 1}), 0);
  Rng rng(122);
  for (int trial = 0; trial < 2000; ++trial) {
    const auto prices = random_prices(rng);
    ASSERT_EQ(max_profit_many(prices), brute_force(prices, {})) << "prices = " << show(prices);
  }
}

EXERCISE_TEST("dp.123", BestTimeToBuyAndSellStockIII, ExamplesAndBruteForce) {
  EXPECT_EQ(max_profit_two({3, 3, 5, 0, 0, 3, 1, 4}), 6);
  EXPECT_EQ(max_profit_two({1, 2, 3, 4, 5}), 4);
  EXPECT_EQ(max_profit_two({7, 6, 4, 3, 1}), 0);
  EXPECT_EQ(max_profit_two({1}), 0);
  Rng rng(123);
  for (int trial = 0; trial < 2000; ++trial) {
    const auto prices = random_prices(rng);
    ASSERT_EQ(max_profit_two(prices), brute_force(prices, {.max_transactions = 2}))
        << "prices = " << show(prices);
  }
}

EXERCISE_TEST("dp.188", BestTimeToBuyAndSellStockIV, ExamplesAndBruteForce) {
  EXPECT_EQ(max_profit_k(2, {2, 4, 1}), 2);
  EXPECT_EQ(max_profit_k(2, {3, 2, 6, 5, 0, 3}), 7);
  EXPECT_EQ(max_profit_k(0, {1, 5}), 0) << "no transactions allowed";
  EXPECT_EQ(max_profit_k(1000000, {1, 5, 2, 8}), 10)
      << "k far beyond n/2 (must not allocate k states)";
  Rng rng(188);
  for (int trial = 0; trial < 2000; ++trial) {
    const auto prices = random_prices(rng);
    const int k = static_cast<int>(rng.uniform_int(0, 4));
    ASSERT_EQ(max_profit_k(k, prices), brute_force(prices, {.max_transactions = k}))
        << "k = " << k << ", prices = " << show(prices);
  }
}

EXERCISE_TEST("dp.309", BestTimeWithCooldown, ExamplesAndBruteForce) {
  EXPECT_EQ(max_profit_cooldown({1, 2, 3, 0, 2}), 3);
  EXPECT_EQ(max_profit_cooldown({1}), 0);
  EXPECT_EQ(max_profit_cooldown({}), 0);
  Rng rng(309);
  for (int trial = 0; trial < 2000; ++trial) {
    const auto prices = random_prices(rng);
    ASSERT_EQ(max_profit_cooldown(prices), brute_force(prices, {.cooldown = true}))
        << "prices = " << show(prices);
  }
}

EXERCISE_TEST("dp.714", BestTimeWithFee, ExamplesAndBruteForce) {
  EXPECT_EQ(max_profit_fee({1, 3, 2, 8, 4, 9}, 2), 8);
  EXPECT_EQ(max_profit_fee({1, 3, 7, 5, 10, 3}, 3), 6);
  EXPECT_EQ(max_profit_fee({1, 3}, 5), 0) << "the fee eats the gain: do nothing";
  Rng rng(714);
  for (int trial = 0; trial < 2000; ++trial) {
    const auto prices = random_prices(rng);
    const int fee = static_cast<int>(rng.uniform_int(0, 5));
    ASSERT_EQ(max_profit_fee(prices, fee), brute_force(prices, {.fee = fee}))
        << "fee = " << fee << ", prices = " << show(prices);
  }
}

}  // namespace
}  // namespace book::dynprog
