#include <algorithm>
#include <climits>
#include <vector>

#include "chapters/12_dynamic_programming/contracts.h"
#include "chapters/12_dynamic_programming/stocks.h"

// Every stock problem is one state machine walked day by day: `hold` = best cash while holding a
// share, `free` = best cash while not. Buying moves free -> hold (cash - price), selling moves
// hold -> free (cash + price). The variants only change which moves are allowed.

namespace book::dynprog {

int max_profit_one(const std::vector<int>& prices) {
  contract::stock_prices("max_profit_one", prices);
  int hold = INT_MIN / 2, free = 0;
  for (int p : prices) {
    free = std::max(free, hold + p);
    hold = std::max(hold, -p);  // one buy only: from 0 cash, never from an earlier sale's profit
  }
  return free;
}

int max_profit_many(const std::vector<int>& prices) {
  contract::stock_prices("max_profit_many", prices);
  int hold = INT_MIN / 2, free = 0;
  for (int p : prices) {
    const int previous_free = free;
    free = std::max(free, hold + p);
    hold = std::max(hold, previous_free - p);
  }
  return free;
}

int max_profit_two(const std::vector<int>& prices) {
  contract::stock_prices("max_profit_two", prices);
  return max_profit_k(2, prices);
}

//! [max_profit_k]
// hold[j] / free[j] = best cash having started j transactions (a transaction starts at its buy).
// Transactions beyond n/2 can never all fit, so k is capped (and 122's answer is the limit).
int max_profit_k(int k, const std::vector<int>& prices) {
  contract::max_profit_k(k, prices);
  const int n = static_cast<int>(prices.size());
  k = std::min(k, n / 2);
  if (k <= 0) return 0;
  std::vector<int> hold(k + 1, INT_MIN / 2), free(k + 1, 0);
  for (int p : prices)
    for (int j = k; j >= 1; --j) {  // j descending: hold[j] reads free[j-1] from yesterday
      free[j] = std::max(free[j], hold[j] + p);
      hold[j] = std::max(hold[j], free[j - 1] - p);
    }
  return free[k];
}
//! [max_profit_k]

// A third state: `cooling` = just sold today, so tomorrow may not buy.
int max_profit_cooldown(const std::vector<int>& prices) {
  contract::stock_prices("max_profit_cooldown", prices);
  int hold = INT_MIN / 2, cooling = INT_MIN / 2, free = 0;
  for (int p : prices) {
    const int next_hold = std::max(hold, free - p);
    const int next_cooling = hold + p;
    const int next_free = std::max(free, cooling);
    hold = next_hold, cooling = next_cooling, free = next_free;
  }
  return std::max(free, cooling);
}

int max_profit_fee(const std::vector<int>& prices, int fee) {
  contract::max_profit_fee(prices, fee);
  int hold = INT_MIN / 2, free = 0;
  for (int p : prices) {
    const int previous_free = free;
    free = std::max(free, hold + p - fee);
    hold = std::max(hold, previous_free - p);
  }
  return free;
}

}  // namespace book::dynprog
