/// @file
/// The filled dp tables behind the explain stage: for a problem and an input, the textbook table
/// cell by cell, so a reader can compare it with the table their own solution builds (step 5 of
/// the five-step method: print the table). Scaffolding, not exercises: the stage prints the
/// reader's answer (through the track alias) next to the table's.
#pragma once

#include <string>
#include <vector>

#include "common/table.h"

namespace book::dynprog::explain {

/// A filled dp table and what it means.
struct Explained {
  std::string title;       ///< the problem, e.g. "LeetCode 115, Distinct Subsequences"
  std::string state;       ///< what one cell means, e.g. "dp[i][j] = ways s[0..i) contains t[0..j)"
  std::string recurrence;  ///< the transition
  Table table;             ///< the cells, with row and column labels
  std::string answer;      ///< the answer read off the table
  std::string answer_cell;  ///< where the answer is, e.g. "dp[7][6], the last cell"
};

/// A parsed request: which problem and its inputs.
struct Request {
  int problem = 0;                 ///< the LeetCode number
  std::vector<std::string> words;  ///< string arguments (115, 72, 1143, 5)
  std::vector<int> numbers;        ///< integer arguments (416, 322: amount then coins, 300)
};

/// The problems the stage explains, with their inputs and an example of each.
std::string usage();

/// Parses a problem and its inputs: `{"115", s, t}`, `{"72", a, b}`, `{"1143", a, b}`,
/// `{"5", s}`, `{"416", "1,5,11,5"}`, `{"300", "10,9,2,5"}`, `{"322", amount, "1,2,5"}` (numbers
/// as one comma-separated list). Throws book::Error, saying what was wrong, for an unknown
/// problem, missing or extra inputs, non-numbers, or inputs too large to print (strings over 40
/// characters, capacities over 300, more than 40 numbers).
Request parse(const std::vector<std::string>& args);

/// The stage's command line: the tour, or one problem and its inputs.
struct Command {
  bool tour = false;  ///< `--tour`: a few tables, brute force vs your DP, the tour lines
  Request request;    ///< otherwise: the problem to explain
};

/// Parses the stage's command line (the arguments after the program's name) with book::Flags:
/// `--tour`, or `<problem> <input> [<input>]` as parse() takes them.
/// @throws book::UsageError for a bad command line, book::Error for bad inputs,
///   book::HelpRequested (with usage() appended) for `--help`.
Command parse_command(const std::vector<std::string>& arguments);

/// The filled table for a parsed request.
Explained fill(const Request& request);

/// LeetCode 115: dp[i][j] = ways the first i characters of s contain the first j of t.
Explained num_distinct(const std::string& s, const std::string& t);
/// LeetCode 72: dp[i][j] = edits turning the first i of a into the first j of b.
Explained edit_distance(const std::string& a, const std::string& b);
/// LeetCode 1143: dp[i][j] = LCS of the first i of a and the first j of b.
Explained lcs(const std::string& a, const std::string& b);
/// LeetCode 416: reachable[k][c] = some subset of the first k numbers sums to c.
Explained partition(const std::vector<int>& nums);
/// LeetCode 322: fewest[k][c] = fewest coins among the first k making c.
Explained coin_change(int amount, const std::vector<int>& coins);
/// LeetCode 300: dp[i] = longest increasing subsequence ending at i, and the tails array.
Explained lis(const std::vector<int>& nums);
/// LeetCode 5: is[i][j] = s[i..j] is a palindrome.
Explained palindrome(const std::string& s);

}  // namespace book::dynprog::explain
