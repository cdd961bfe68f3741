// Scaffolding that is not an exercise: the tree builder for LeetCode 337 and the limits of the
// brute-force enumerators. (book_test: these pass on both tracks.)
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "chapters/12_dynamic_programming/brute_force.h"
#include "chapters/12_dynamic_programming/explain_tables.h"
#include "chapters/12_dynamic_programming/robbers.h"
#include "common/check.h"

namespace book::dp {
namespace {

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
  EXPECT_THROW(build_tree({null, 1}), Error) << "a null root cannot have children";
  EXPECT_THROW(build_tree({1, null, null, 2}), Error) << "2 has no parent slot left";
  try {
    build_tree({1, null, null, 2});
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no parent slot"), std::string::npos) << e.what();
  }
}

TEST(BruteForce, RefusesInputsThatWouldRunForHours) {
  EXPECT_THROW(brute::num_distinct(std::string(25, 'a'), "a"), Error);
  EXPECT_THROW(brute::longest_common_subsequence(std::string(25, 'a'), "a"), Error);
  EXPECT_THROW(brute::length_of_lis(std::vector<int>(25, 1)), Error);
  EXPECT_THROW(brute::can_partition(std::vector<int>(25, 1)), Error);
  EXPECT_THROW(brute::coin_change({1, 2}, 61), Error);
  EXPECT_THROW(brute::coin_change({0, 2}, 6), Error) << "a zero coin would recurse forever";
  EXPECT_THROW(brute::min_distance(std::string(12, 'a'), std::string(11, 'b')), Error);
  try {
    brute::num_distinct(std::string(30, 'a'), "a");
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("2^30"), std::string::npos) << e.what();
  }
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
  EXPECT_EQ(explain::fill(explain::parse({"416", "1", "5", "11", "5"})).answer, "true");
  EXPECT_EQ(explain::fill(explain::parse({"416", "1", "2", "4"})).answer, "false") << "odd total";
  EXPECT_EQ(explain::fill(explain::parse({"322", "11", "1", "2", "5"})).answer, "3");
  EXPECT_EQ(explain::fill(explain::parse({"322", "3", "2"})).answer, "-1");
  EXPECT_EQ(
      explain::fill(explain::parse({"300", "10", "9", "2", "5", "3", "7", "101", "18"})).answer,
      "4");
  EXPECT_EQ(explain::fill(explain::parse({"5", "babad"})).answer, "\"bab\"");
  EXPECT_EQ(explain::fill(explain::parse({"5", ""})).answer, "\"\"") << "the empty string";
}

TEST(Explain, BadArgumentsSayWhatIsWrong) {
  auto message = [](const std::vector<std::string>& args) {
    try {
      explain::parse(args);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_NE(message({}).find("no problem"), std::string::npos);
  EXPECT_NE(message({"999"}).find("pick one of"), std::string::npos);
  EXPECT_NE(message({"abc"}).find("must be an integer"), std::string::npos);
  EXPECT_NE(message({"115", "rabbbit"}).find("takes 2"), std::string::npos);
  EXPECT_NE(message({"115", std::string(41, 'a'), "a"}).find("at most 40"), std::string::npos);
  EXPECT_NE(message({"416", "1", "x"}).find("must be an integer"), std::string::npos);
  EXPECT_NE(message({"416", "0", "2"}).find("[1, 100]"), std::string::npos);
  EXPECT_NE(message({"416", "100", "100", "100", "100", "100", "100", "100"}).find("columns"),
            std::string::npos);
  EXPECT_NE(message({"322", "11"}).find("at least one coin"), std::string::npos);
  EXPECT_NE(message({"322", "301", "1"}).find("amount"), std::string::npos);
  EXPECT_NE(message({"322", "5", "0"}).find("positive"), std::string::npos);
  EXPECT_NE(message({"300"}).find("1 to 40"), std::string::npos);
  EXPECT_FALSE(explain::usage().empty());
}

}  // namespace
}  // namespace book::dp
