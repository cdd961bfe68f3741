#include "chapters/12_dynamic_programming/explain_tables.h"

#include <algorithm>
#include <charconv>
#include <climits>
#include <numeric>

#include "common/check.h"
#include "common/flags.h"

namespace book::dynprog::explain {

namespace {
constexpr std::size_t kMaxText = 40, kMaxNumbers = 40;
constexpr int kMaxCapacity = 300;

std::string letter(char c) { return std::string(1, c); }

// Columns "", "", t[0], t[1], ... and rows "", s[0], ... : the standard layout of a prefix table,
// where row i and column j stand for the first i and j characters.
template <typename Cell>
Table prefix_table(const std::string& s, const std::string& t, Cell cell) {
  std::vector<std::string> columns{"", "\"\""};
  for (char c : t) columns.push_back(letter(c));
  Table table(columns);
  for (std::size_t i = 0; i <= s.size(); ++i) {
    std::vector<std::string> row{i == 0 ? "\"\"" : letter(s[i - 1])};
    for (std::size_t j = 0; j <= t.size(); ++j) row.push_back(cell(i, j));
    table.add_row(row);
  }
  return table;
}

int to_int(const std::string& text, const char* what) {
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  BOOK_CHECK(error == std::errc() && end == text.data() + text.size(),
             what << " must be an integer, got \"" << text << "\"");
  return value;
}

// "1,5,11,5" -> {1, 5, 11, 5}; every item an integer.
std::vector<int> to_ints(const std::string& list, int problem) {
  std::vector<int> numbers;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = list.find(',', start);
    numbers.push_back(to_int(list.substr(start, comma - start), "every number"));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  BOOK_CHECK(numbers.size() <= kMaxNumbers, "problem " << problem << " takes 1 to " << kMaxNumbers
                                                       << " numbers, got " << numbers.size());
  return numbers;
}
}  // namespace

std::string usage() {
  return "problems and their inputs (numbers as one comma-separated list):\n"
         "  115  s t           Distinct Subsequences    e.g. explain 115 rabbbit rabbit\n"
         "  72   word1 word2   Edit Distance            e.g. explain 72 horse ros\n"
         "  1143 text1 text2   Longest Common Subseq.   e.g. explain 1143 abcde ace\n"
         "  416  nums          Partition Equal Subset   e.g. explain 416 1,5,11,5\n"
         "  322  amount coins  Coin Change              e.g. explain 322 11 1,2,5\n"
         "  300  nums          Longest Increasing Sub.  e.g. explain 300 10,9,2,5,3,7,101,18\n"
         "  5    s             Longest Palindromic Sub. e.g. explain 5 babad\n"
         "Strings up to 40 characters, up to 40 numbers, sums and amounts up to 300.\n";
}

Request parse(const std::vector<std::string>& args) {
  BOOK_CHECK(!args.empty(), "no problem given");
  Request request;
  request.problem = to_int(args[0], "the problem number");
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  switch (request.problem) {
    case 115:
    case 72:
    case 1143:
    case 5: {
      const std::size_t wanted = request.problem == 5 ? 1 : 2;
      BOOK_CHECK(rest.size() == wanted, "problem " << request.problem << " takes " << wanted
                                                   << " string(s), got " << rest.size());
      for (const auto& w : rest)
        BOOK_CHECK(w.size() <= kMaxText, "\"" << w << "\" has " << w.size()
                                              << " characters; the table is printed for at most "
                                              << kMaxText);
      request.words = rest;
      break;
    }
    case 416:
    case 300: {
      BOOK_CHECK(rest.size() == 1, "problem " << request.problem
                                              << " takes one comma-separated list of 1 to "
                                              << kMaxNumbers << " numbers (e.g. 1,5,11,5), got "
                                              << rest.size() << " inputs");
      request.numbers = to_ints(rest[0], request.problem);
      if (request.problem == 416) {
        for (int x : request.numbers)
          BOOK_CHECK(x >= 1 && x <= 100, "416 takes numbers in [1, 100], got " << x);
        const int total = std::accumulate(request.numbers.begin(), request.numbers.end(), 0);
        BOOK_CHECK(total / 2 <= kMaxCapacity, "half the total is "
                                                  << total / 2 << "; the table is printed up to "
                                                  << kMaxCapacity << " columns");
      }
      break;
    }
    case 322: {
      BOOK_CHECK(rest.size() == 2,
                 "322 takes an amount and a comma-separated list of coins (e.g. "
                 "11 1,2,5), got "
                     << rest.size() << " inputs");
      request.numbers = {to_int(rest[0], "the amount")};
      const std::vector<int> coins = to_ints(rest[1], 322);
      request.numbers.insert(request.numbers.end(), coins.begin(), coins.end());
      BOOK_CHECK(request.numbers[0] >= 0 && request.numbers[0] <= kMaxCapacity,
                 "the amount must be in [0, " << kMaxCapacity << "], got " << request.numbers[0]);
      for (std::size_t i = 1; i < request.numbers.size(); ++i)
        BOOK_CHECK(request.numbers[i] >= 1, "coins must be positive, got " << request.numbers[i]);
      break;
    }
    default:
      BOOK_CHECK(false, "problem "
                            << request.problem
                            << " has no table here; pick one of 115, 72, 1143, 416, 322, 300, 5");
  }
  return request;
}

Command parse_command(const std::vector<std::string>& arguments) {
  Command command;
  std::string problem, first, second;
  Flags flags("explain",
              "prints the filled dp table of a LeetCode problem for one input, with your "
              "solution's answer next to the table's");
  flags.add("tour", &command.tour, "a few tables, brute force vs your DP on 115, the tour lines");
  flags.positional("problem", &problem, "the LeetCode number (see below)").optional();
  flags.positional("input", &first, "its first input").optional();
  flags.positional("input2", &second, "its second input, if it takes two").optional();
  try {
    flags.parse(arguments);
  } catch (const HelpRequested& help) {
    throw HelpRequested(help.text() + "\n" + usage());
  }
  if (command.tour) {
    if (flags.was_set("problem"))
      throw UsageError("--tour takes no problem (got '" + problem + "'): run one or the other");
    return command;
  }
  if (!flags.was_set("problem"))
    throw UsageError("no problem given: " + flags.usage() + ", or --tour; --help lists them");
  std::vector<std::string> args{problem};
  if (flags.was_set("input")) args.push_back(first);
  if (flags.was_set("input2")) args.push_back(second);
  command.request = parse(args);
  return command;
}

Explained fill(const Request& r) {
  switch (r.problem) {
    case 115:
      return num_distinct(r.words[0], r.words[1]);
    case 72:
      return edit_distance(r.words[0], r.words[1]);
    case 1143:
      return lcs(r.words[0], r.words[1]);
    case 5:
      return palindrome(r.words[0]);
    case 416:
      return partition(r.numbers);
    case 322:
      return coin_change(r.numbers[0], std::vector<int>(r.numbers.begin() + 1, r.numbers.end()));
    case 300:
      return lis(r.numbers);
  }
  BOOK_CHECK(false, "problem " << r.problem << " has no table; parse() should have said so");
}

Explained num_distinct(const std::string& s, const std::string& t) {
  std::vector<std::vector<std::uint64_t>> dp(s.size() + 1,
                                             std::vector<std::uint64_t>(t.size() + 1, 0));
  for (std::size_t i = 0; i <= s.size(); ++i) dp[i][0] = 1;
  for (std::size_t i = 1; i <= s.size(); ++i)
    for (std::size_t j = 1; j <= t.size(); ++j)
      dp[i][j] = dp[i - 1][j] + (s[i - 1] == t[j - 1] ? dp[i - 1][j - 1] : 0);
  return {
      "LeetCode 115, Distinct Subsequences: s = \"" + s + "\", t = \"" + t + "\"",
      "dp[i][j] = ways the first i characters of s contain the first j of t (counting ways)",
      "dp[i][j] = dp[i-1][j] + (s[i-1] == t[j-1] ? dp[i-1][j-1] : 0); dp[i][0] = 1",
      prefix_table(s, t, [&](std::size_t i, std::size_t j) { return std::to_string(dp[i][j]); }),
      std::to_string(dp[s.size()][t.size()]),
      "dp[" + std::to_string(s.size()) + "][" + std::to_string(t.size()) + "], the last cell"};
}

Explained edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<int>> dp(a.size() + 1, std::vector<int>(b.size() + 1, 0));
  for (std::size_t i = 0; i <= a.size(); ++i)
    for (std::size_t j = 0; j <= b.size(); ++j)
      dp[i][j] = i == 0   ? static_cast<int>(j)
                 : j == 0 ? static_cast<int>(i)
                 : a[i - 1] == b[j - 1]
                     ? dp[i - 1][j - 1]
                     : 1 + std::min({dp[i - 1][j - 1], dp[i - 1][j], dp[i][j - 1]});
  return {
      "LeetCode 72, Edit Distance: word1 = \"" + a + "\", word2 = \"" + b + "\"",
      "dp[i][j] = fewest edits turning the first i of word1 into the first j of word2 (counting "
      "operations)",
      "dp[i][j] = equal ? dp[i-1][j-1] : 1 + min(dp[i-1][j-1], dp[i-1][j], dp[i][j-1]); dp[i][0] = "
      "i, dp[0][j] = j",
      prefix_table(a, b, [&](std::size_t i, std::size_t j) { return std::to_string(dp[i][j]); }),
      std::to_string(dp[a.size()][b.size()]),
      "dp[" + std::to_string(a.size()) + "][" + std::to_string(b.size()) + "], the last cell"};
}

Explained lcs(const std::string& a, const std::string& b) {
  std::vector<std::vector<int>> dp(a.size() + 1, std::vector<int>(b.size() + 1, 0));
  for (std::size_t i = 1; i <= a.size(); ++i)
    for (std::size_t j = 1; j <= b.size(); ++j)
      dp[i][j] = a[i - 1] == b[j - 1] ? dp[i - 1][j - 1] + 1 : std::max(dp[i - 1][j], dp[i][j - 1]);
  return {
      "LeetCode 1143, Longest Common Subsequence: text1 = \"" + a + "\", text2 = \"" + b + "\"",
      "dp[i][j] = LCS length of the first i of text1 and the first j of text2",
      "dp[i][j] = equal ? dp[i-1][j-1] + 1 : max(dp[i-1][j], dp[i][j-1]); row 0 and column 0 are 0",
      prefix_table(a, b, [&](std::size_t i, std::size_t j) { return std::to_string(dp[i][j]); }),
      std::to_string(dp[a.size()][b.size()]),
      "dp[" + std::to_string(a.size()) + "][" + std::to_string(b.size()) + "], the last cell"};
}

Explained partition(const std::vector<int>& nums) {
  const int total = std::accumulate(nums.begin(), nums.end(), 0), half = total / 2;
  std::vector<std::string> columns{"items"};
  for (int c = 0; c <= half; ++c) columns.push_back(std::to_string(c));
  Table table(columns);
  std::vector<char> reachable(half + 1, 0);
  reachable[0] = 1;
  auto add = [&](const std::string& label) {
    std::vector<std::string> row{label};
    for (int c = 0; c <= half; ++c) row.push_back(reachable[c] ? "T" : ".");
    table.add_row(row);
  };
  add("{}");
  for (std::size_t k = 0; k < nums.size(); ++k) {
    for (int c = half; c >= nums[k]; --c) reachable[c] = reachable[c] || reachable[c - nums[k]];
    add("+" + std::to_string(nums[k]));
  }
  const bool answer = total % 2 == 0 && reachable[half];
  return {"LeetCode 416, Partition Equal Subset Sum: total " + std::to_string(total),
          "reachable[k][c] = some subset of the first k numbers sums to c (feasibility); one row "
          "per item",
          "reachable[k][c] = reachable[k-1][c] || reachable[k-1][c - x]: capacity DESCENDING in "
          "one row",
          table,
          answer ? "true" : "false",
          total % 2 ? "no cell: the total is odd"
                    : "reachable[" + std::to_string(nums.size()) + "][" + std::to_string(half) +
                          "], the last cell"};
}

Explained coin_change(int amount, const std::vector<int>& coins) {
  std::vector<std::string> columns{"coins"};
  for (int c = 0; c <= amount; ++c) columns.push_back(std::to_string(c));
  Table table(columns);
  std::vector<int> fewest(amount + 1, INT_MAX);
  fewest[0] = 0;
  auto add = [&](const std::string& label) {
    std::vector<std::string> row{label};
    for (int c = 0; c <= amount; ++c)
      row.push_back(fewest[c] == INT_MAX ? "-" : std::to_string(fewest[c]));
    table.add_row(row);
  };
  add("{}");
  for (int coin : coins) {
    for (int c = coin; c <= amount; ++c)
      if (fewest[c - coin] != INT_MAX) fewest[c] = std::min(fewest[c], fewest[c - coin] + 1);
    add("+" + std::to_string(coin));
  }
  return {"LeetCode 322, Coin Change: amount " + std::to_string(amount),
          "fewest[k][c] = fewest coins among the first k kinds making c (\"-\": impossible)",
          "fewest[c] = min(fewest[c], fewest[c - coin] + 1): capacity ASCENDING (coins reusable)",
          table,
          fewest[amount] == INT_MAX ? "-1" : std::to_string(fewest[amount]),
          "fewest[" + std::to_string(coins.size()) + "][" + std::to_string(amount) +
              "], the last cell"};
}

Explained lis(const std::vector<int>& nums) {
  Table table({"i", "nums[i]", "dp[i] (ending at i)", "tails after i"});
  std::vector<int> dp(nums.size(), 1), tails;
  int best = 0;
  for (std::size_t i = 0; i < nums.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j)
      if (nums[j] < nums[i]) dp[i] = std::max(dp[i], dp[j] + 1);
    best = std::max(best, dp[i]);
    const auto slot = std::lower_bound(tails.begin(), tails.end(), nums[i]);
    if (slot == tails.end())
      tails.push_back(nums[i]);
    else
      *slot = nums[i];
    std::string shown;
    for (std::size_t k = 0; k < tails.size(); ++k)
      shown += (k ? " " : "") + std::to_string(tails[k]);
    table.add_row({std::to_string(i), std::to_string(nums[i]), std::to_string(dp[i]), shown});
  }
  return {"LeetCode 300, Longest Increasing Subsequence",
          "dp[i] = longest strictly increasing subsequence ENDING at i; tails[l] = smallest end of "
          "one of length l+1",
          "dp[i] = 1 + max(dp[j] : j < i, nums[j] < nums[i]) in O(n^2); tails by binary search in "
          "O(n log n)",
          table,
          std::to_string(best),
          "max over dp[i], NOT the last cell; equal to the final length of tails"};
}

Explained palindrome(const std::string& s) {
  const std::size_t n = s.size();
  std::vector<std::vector<char>> is(n, std::vector<char>(n, 0));
  std::size_t best_start = 0, best_length = n ? 1 : 0;
  for (std::size_t i = n; i-- > 0;)
    for (std::size_t j = i; j < n; ++j) {
      is[i][j] = s[i] == s[j] && (j - i < 2 || is[i + 1][j - 1]);
      if (is[i][j] && j - i + 1 >= best_length) best_start = i, best_length = j - i + 1;
    }
  std::vector<std::string> columns{"i \\ j"};
  for (std::size_t j = 0; j < n; ++j) columns.push_back(letter(s[j]));
  Table table(columns);
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<std::string> row{letter(s[i])};
    for (std::size_t j = 0; j < n; ++j) row.push_back(j < i ? "" : is[i][j] ? "T" : ".");
    table.add_row(row);
  }
  return {"LeetCode 5, Longest Palindromic Substring: s = \"" + s + "\"",
          "is[i][j] = s[i..j] is a palindrome (the upper triangle)",
          "is[i][j] = s[i] == s[j] && (j - i < 2 || is[i+1][j-1]): i DESCENDING, because row i "
          "reads row i+1",
          table,
          "\"" + s.substr(best_start, best_length) + "\"",
          n == 0 ? "no cell: s is empty"
                 : "the leftmost longest T, anywhere in the triangle: is[" +
                       std::to_string(best_start) + "][" +
                       std::to_string(best_start + best_length - 1) + "]"};
}

}  // namespace book::dynprog::explain
