#include "chapters/12_dynamic_programming/dp.h"

namespace book::dp {

// dp[i][j] = ways the first i characters of s contain the first j of t as a subsequence:
// dp[i][j] = dp[i-1][j] + (s[i-1] == t[j-1] ? dp[i-1][j-1] : 0). Row i reads only row i-1, so one
// row suffices if j runs downwards (dp[j-1] must still hold row i-1's value when dp[j] reads it).
std::uint64_t num_distinct(const std::string& s, const std::string& t) {
  std::vector<std::uint64_t> dp(t.size() + 1, 0);
  dp[0] = 1;  // the empty t is a subsequence of every prefix of s exactly once
  for (char c : s)
    for (std::size_t j = t.size(); j >= 1; --j)
      if (t[j - 1] == c) dp[j] += dp[j - 1];  // unsigned: wraps modulo 2^64 by definition
  return dp[t.size()];
}

}  // namespace book::dp
