/// @file
/// Chapter 12, section Stocks: the stock problems as a small state machine (holding / not holding,
/// transactions left).
#pragma once

#include <vector>

namespace book::dynprog {

// The six stock problems share their input: `prices[i]` is the price on day i (0 <= price <=
// 10^4, at most 3 · 10^4 days; checked, so every answer fits in int); one share is held at most; an
// empty list earns 0.

/// LeetCode 121: the best profit from at most one buy followed by one later sell (0 if none pays).
/// \exercise{dp.121}
int max_profit_one(const std::vector<int>& prices);

/// LeetCode 122: the best profit from any number of transactions, holding at most one share.
/// \exercise{dp.122}
int max_profit_many(const std::vector<int>& prices);

/// LeetCode 123: the best profit from at most two transactions.
/// \exercise{dp.123}
int max_profit_two(const std::vector<int>& prices);

/// LeetCode 188: the best profit from at most `k` transactions (k >= 0; more than
/// days / 2 is the same as days / 2).
/// \exercise{dp.188}
int max_profit_k(int k, const std::vector<int>& prices);

/// LeetCode 309: the best profit from any number of transactions with a one-day cooldown after
/// each sell.
/// \exercise{dp.309}
int max_profit_cooldown(const std::vector<int>& prices);

/// LeetCode 714: the best profit from any number of transactions, paying `fee` per transaction
/// (0 <= fee <= 5 · 10^4).
/// \exercise{dp.714}
int max_profit_fee(const std::vector<int>& prices, int fee);

}  // namespace book::dynprog
