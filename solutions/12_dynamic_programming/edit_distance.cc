#include <algorithm>
#include <vector>

#include "chapters/12_dynamic_programming/edit_distance.h"

namespace book::dynprog {

//! [num_distinct]
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
//! [num_distinct]

// dp[i][j] = deletions making the first i of word1 equal the first j of word2:
// equal last letters ? dp[i-1][j-1] : 1 + min(dp[i-1][j], dp[i][j-1]); dp[i][0] = i, dp[0][j] = j.
int min_delete_steps(const std::string& word1, const std::string& word2) {
  std::vector<int> dp(word2.size() + 1);
  for (std::size_t j = 0; j <= word2.size(); ++j) dp[j] = static_cast<int>(j);
  for (std::size_t i = 1; i <= word1.size(); ++i) {
    int diagonal = dp[0];
    dp[0] = static_cast<int>(i);
    for (std::size_t j = 1; j <= word2.size(); ++j) {
      const int above = dp[j];
      dp[j] = word1[i - 1] == word2[j - 1] ? diagonal : 1 + std::min(above, dp[j - 1]);
      diagonal = above;
    }
  }
  return dp[word2.size()];
}

// 583 with each deletion costing the character's ASCII value instead of 1.
int minimum_delete_sum(const std::string& s1, const std::string& s2) {
  std::vector<int> dp(s2.size() + 1, 0);
  for (std::size_t j = 1; j <= s2.size(); ++j)
    dp[j] = dp[j - 1] + static_cast<unsigned char>(s2[j - 1]);
  for (std::size_t i = 1; i <= s1.size(); ++i) {
    const int cost_i = static_cast<unsigned char>(s1[i - 1]);
    int diagonal = dp[0];
    dp[0] += cost_i;
    for (std::size_t j = 1; j <= s2.size(); ++j) {
      const int above = dp[j];
      dp[j] = s1[i - 1] == s2[j - 1]
                  ? diagonal
                  : std::min(above + cost_i, dp[j - 1] + static_cast<unsigned char>(s2[j - 1]));
      diagonal = above;
    }
  }
  return dp[s2.size()];
}

//! [min_distance]
// dp[i][j] = edits turning the first i of word1 into the first j of word2: equal last letters ?
// dp[i-1][j-1] : 1 + min(dp[i-1][j-1] (replace), dp[i-1][j] (delete), dp[i][j-1] (insert)).
// It counts operations, so the equal case COPIES the diagonal; 115 counts ways, so it ADDS.
int min_distance(const std::string& word1, const std::string& word2) {
  std::vector<int> dp(word2.size() + 1);
  for (std::size_t j = 0; j <= word2.size(); ++j) dp[j] = static_cast<int>(j);
  for (std::size_t i = 1; i <= word1.size(); ++i) {
    int diagonal = dp[0];
    dp[0] = static_cast<int>(i);
    for (std::size_t j = 1; j <= word2.size(); ++j) {
      const int above = dp[j];
      dp[j] = word1[i - 1] == word2[j - 1] ? diagonal : 1 + std::min({diagonal, above, dp[j - 1]});
      diagonal = above;
    }
  }
  return dp[word2.size()];
}
//! [min_distance]

// ok[i][j] = the first i of s1 and the first j of s2 interleave into the first i+j of s3: the
// last character of that prefix came from s1 (ok[i-1][j]) or from s2 (ok[i][j-1]).
bool is_interleave(const std::string& s1, const std::string& s2, const std::string& s3) {
  if (s1.size() + s2.size() != s3.size()) return false;
  std::vector<char> ok(s2.size() + 1, 0);
  for (std::size_t i = 0; i <= s1.size(); ++i)
    for (std::size_t j = 0; j <= s2.size(); ++j) {
      if (i == 0 && j == 0) {
        ok[0] = 1;
        continue;
      }
      const bool from_s1 = i > 0 && ok[j] && s1[i - 1] == s3[i + j - 1];
      const bool from_s2 = j > 0 && ok[j - 1] && s2[j - 1] == s3[i + j - 1];
      ok[j] = from_s1 || from_s2;
    }
  return ok[s2.size()];
}

}  // namespace book::dynprog
