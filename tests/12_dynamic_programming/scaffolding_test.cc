// Scaffolding that is not an exercise: the tree builder for LeetCode 337, the limits of the
// brute-force enumerators, and the explain stage's command line. (book_test: these pass on both
// tracks.)
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "chapters/12_dynamic_programming/brute_force.h"
#include "chapters/12_dynamic_programming/explain_tables.h"
#include "chapters/12_dynamic_programming/robbers.h"
#include "common/check.h"
#include "common/flags.h"
#include "common/testing/expect_error.h"

namespace book::dynprog {
namespace {

using ::book::testing::expect_error;

constexpr auto null = std::nullopt;

TEST(BuildTree, FollowsLeetCodeLevelOrder) {
  const auto root = build_tree({3, 2, 3, null, 3, null, 1});
  ASSERT_NE(root, nullptr);
  EXPECT_EQ(root->val, 3);
  ASSERT_NE(root->left, nullptr);
  EXPECT_EQ(root->left->val, 2);
  EXPECT_EQ(root->left->left, nullptr) << "the first null is the left child of 2";
  ASSERT_NE(root->left->right, nullptr);
  EXPECT_EQ(root->left->right->val, 3);
  ASSERT_NE(root->right, nullptr);
  EXPECT_EQ(root->right->left, nullptr);
  ASSERT_NE(root->right->right, nullptr);
  EXPECT_EQ(root->right->right->val, 1);
}

TEST(BuildTree, EmptyListsAndLoneNull) {
  EXPECT_EQ(build_tree({}), nullptr);
  EXPECT_EQ(build_tree({null}), nullptr);
}

TEST(BuildTree, RejectsEntriesWithoutAParent) {
  expect_error(
      [] {
        build_tree({null, 1});
      },
      "starts with null (an empty tree) but lists 1 more entries");  // a null root cannot have
                                                                     // children
  expect_error([] { build_tree({1, null, null, 2}); }, "has no parent slot left");
}

TEST(BruteForce, RefusesInputsThatWouldRunForHours) {
  expect_error([] { brute::num_distinct(std::string(25, 'a'), "a"); }, "2^25");
  expect_error([] { brute::num_distinct(std::string(30, 'a'), "a"); }, "2^30");
  expect_error([] { brute::longest_common_subsequence(std::string(25, 'a'), "a"); }, "2^25");
  expect_error([] { brute::length_of_lis(std::vector<int>(25, 1)); }, "2^25");
  expect_error([] { brute::can_partition(std::vector<int>(25, 1)); }, "2^25");
  expect_error([] { brute::coin_change({1, 2}, 61); }, "keep 0 <= amount <= 60, got 61");
  expect_error([] { brute::coin_change({0, 2}, 6); }, "coins must be positive, got 0");
  expect_error([] { brute::min_distance(std::string(12, 'a'), std::string(11, 'b')); },
               "|a| + |b| <= 22, got 23");
}

TEST(BruteForce, SmallKnownAnswers) {
  EXPECT_EQ(brute::num_distinct("rabbbit", "rabbit"), 3u);
  EXPECT_EQ(brute::longest_common_subsequence("abcde", "ace"), 3);
  EXPECT_EQ(brute::length_of_lis({10, 9, 2, 5, 3, 7, 101, 18}), 4);
  EXPECT_TRUE(brute::can_partition({1, 5, 11, 5}));
  EXPECT_EQ(brute::coin_change({1, 2, 5}, 11), 3);
  EXPECT_EQ(brute::coin_change({2}, 3), -1);
  EXPECT_EQ(brute::min_distance("horse", "ros"), 3);
  EXPECT_EQ(brute::longest_palindrome("babad"), "bab");
}

TEST(Explain, TablesHoldTheTextbookCells) {
  const auto e115 = explain::fill(explain::parse({"115", "rabbbit", "rabbit"}));
  EXPECT_EQ(e115.answer, "3");
  ASSERT_EQ(e115.table.rows().size(), 8u) << "rows: the empty prefix and 7 letters";
  EXPECT_EQ(e115.table.rows()[4][4], "2") << "dp[4][3]: \"rabb\" contains \"rab\" twice";
  EXPECT_EQ(explain::fill(explain::parse({"72", "horse", "ros"})).answer, "3");
  EXPECT_EQ(explain::fill(explain::parse({"1143", "abcde", "ace"})).answer, "3");
  EXPECT_EQ(explain::fill(explain::parse({"416", "1,5,11,5"})).answer, "true");
  EXPECT_EQ(explain::fill(explain::parse({"416", "1,2,4"})).answer, "false") << "odd total";
  EXPECT_EQ(explain::fill(explain::parse({"322", "11", "1,2,5"})).answer, "3");
  EXPECT_EQ(explain::fill(explain::parse({"322", "3", "2"})).answer, "-1");
  EXPECT_EQ(explain::fill(explain::parse({"300", "10,9,2,5,3,7,101,18"})).answer, "4");
  EXPECT_EQ(explain::fill(explain::parse({"5", "babad"})).answer, "\"bab\"");
  EXPECT_EQ(explain::fill(explain::parse({"5", ""})).answer, "\"\"") << "the empty string";
}

TEST(Explain, BadArgumentsSayWhatIsWrong) {
  auto parse = [](std::vector<std::string> args) { return [args] { explain::parse(args); }; };
  expect_error(parse({}), "no problem given");
  expect_error(parse({"999"}), {"problem 999", "pick one of 115, 72"});
  expect_error(parse({"abc"}), "the problem number must be an integer, got \"abc\"");
  expect_error(parse({"115", "rabbbit"}), "problem 115 takes 2 string(s), got 1");
  expect_error(parse({"115", std::string(41, 'a'), "a"}), {"has 41 characters", "at most 40"});
  expect_error(parse({"416", "1,x"}), "every number must be an integer, got \"x\"");
  expect_error(parse({"416", "1,,2"}), "every number must be an integer, got \"\"");
  expect_error(parse({"416", "1", "5"}), "one comma-separated list");
  expect_error(parse({"416", "0,2"}), "416 takes numbers in [1, 100], got 0");
  expect_error(parse({"416", "100,100,100,100,100,100,100"}),
               {"half the total is 350", "300 columns"});
  expect_error(parse({"322", "11"}), "an amount and a comma-separated list of coins");
  expect_error(parse({"322", "301", "1"}), "the amount must be in [0, 300], got 301");
  expect_error(parse({"322", "5", "1,0"}), "coins must be positive, got 0");
  expect_error(parse({"300"}), "one comma-separated list of 1 to 40 numbers");
  expect_error(parse({"300", std::string(40, '1') + ""}), "must be an integer");
  std::string many = "1";
  for (int i = 0; i < 40; ++i) many += ",1";
  expect_error(parse({"300", many}), "takes 1 to 40 numbers, got 41");
  EXPECT_FALSE(explain::usage().empty());
}

TEST(Explain, CommandLine) {
  EXPECT_TRUE(explain::parse_command({"--tour"}).tour);
  const explain::Command c = explain::parse_command({"322", "11", "1,2,5"});
  EXPECT_FALSE(c.tour);
  EXPECT_EQ(c.request.problem, 322);
  EXPECT_EQ(c.request.numbers, (std::vector<int>{11, 1, 2, 5}));
  EXPECT_EQ(explain::parse_command({"5", ""}).request.words, std::vector<std::string>{""});
  expect_error([] { explain::parse_command({}); }, {"no problem given", "--tour"});
  expect_error([] { explain::parse_command({"--tour", "115"}); }, "--tour takes no problem");
  expect_error([] { explain::parse_command({"--tuor"}); }, {"unknown flag --tuor", "--tour"});
  expect_error([] { explain::parse_command({"115", "a", "b", "c"}); }, "unexpected argument 'c'");
  expect_error([] { explain::parse_command({"416", "1,x"}); }, "must be an integer");
  try {
    explain::parse_command({"--help"});
    ADD_FAILURE() << "--help did not throw HelpRequested";
  } catch (const HelpRequested& help) {
    EXPECT_NE(help.text().find("usage: explain"), std::string::npos) << help.text();
    EXPECT_NE(help.text().find("explain 416 1,5,11,5"), std::string::npos) << help.text();
  }
}

}  // namespace
}  // namespace book::dynprog
