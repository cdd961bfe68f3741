#include "chapters/12_dynamic_programming/dp.h"

namespace book::dp {

// dp[i] = ways to reach step i = dp[i-1] + dp[i-2]; only the last two are ever read.
int climb_stairs(int n) {
  int before = 1, last = 1;  // dp[0], dp[1]
  for (int i = 2; i <= n; ++i) {
    const int next = last + before;
    before = last;
    last = next;
  }
  return last;
}

}  // namespace book::dp
