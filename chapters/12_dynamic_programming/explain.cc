// The chapter's stage: `explain <problem> <input> [<input>]` prints the filled dp table for one
// problem and input, then your solution's answer (the track alias: the reference, or yours with
// --config=exercises) next to the table's. `explain --tour` prints a few tables and times the
// brute force against your DP on 115. `explain --help` lists the problems.
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "chapters/12_dynamic_programming/brute_force.h"
#include "chapters/12_dynamic_programming/dp.h"
#include "chapters/12_dynamic_programming/explain_tables.h"
#include "common/check.h"
#include "common/machine_load.h"
#include "common/main.h"
#include "common/rng.h"
#include "common/table.h"
#include "common/timer.h"
#include "common/track.h"

namespace book::dynprog {
namespace {

// The file where the reader writes each problem the stage explains (to print their table from).
std::string exercise_file(int problem) {
  switch (problem) {
    case 115:
    case 72:
      return "exercises/12_dynamic_programming/edit_distance.cc";
    case 1143:
    case 300:
      return "exercises/12_dynamic_programming/subsequences.cc";
    case 416:
    case 322:
      return "exercises/12_dynamic_programming/knapsack.cc";
    case 5:
      return "exercises/12_dynamic_programming/palindromes.cc";
  }
  return "exercises/12_dynamic_programming/";
}

// Your solution's answer for the request, as text; "not started" for a stub.
std::string your_answer(const explain::Request& r) {
  try {
    switch (r.problem) {
      case 115:
        return std::to_string(num_distinct(r.words[0], r.words[1]));
      case 72:
        return std::to_string(min_distance(r.words[0], r.words[1]));
      case 1143:
        return std::to_string(longest_common_subsequence(r.words[0], r.words[1]));
      case 5:
        return "\"" + longest_palindrome(r.words[0]) + "\"";
      case 416:
        return can_partition(r.numbers) ? "true" : "false";
      case 322:
        return std::to_string(
            coin_change(std::vector<int>(r.numbers.begin() + 1, r.numbers.end()), r.numbers[0]));
      case 300:
        return std::to_string(length_of_lis(r.numbers));
    }
  } catch (const NotImplemented& e) {
    return std::string("not started (") + e.what() + ")";
  }
  return "?";
}

void print(const explain::Request& request) {
  const auto e = explain::fill(request);
  const std::string answer = your_answer(request);
  std::cout << "## " << e.title << "\n\n"
            << "state:      " << e.state << "\n"
            << "transition: " << e.recurrence << "\n\n"
            << e.table.markdown() << "\n"
            << "answer: " << e.answer << " (" << e.answer_cell << ")\n";
  if (!exercise_track()) {
    // This build links the reference solutions: there is no "yours" to compare yet.
    std::cout << "the reference solution: " << answer
              << (answer == e.answer ? "  (matches)" : "  (DIFFERS)")
              << "\nyours: build with --config=exercises to run your own: bazel run "
                 "--config=exercises //chapters/12_dynamic_programming:explain -- ...\n\n";
    return;
  }
  std::cout << "yours:  " << answer;
  if (answer == e.answer)
    std::cout << "  (matches)\n\n";
  else if (answer.rfind("not started", 0) == 0)
    std::cout << "\n\n";
  else
    std::cout << "  (DIFFERS from the table's " << e.answer << ")\n"
              << "To compare your table with the one above: print your dp array from "
              << exercise_file(request.problem)
              << " (each row on std::cerr, say), run this same command again, and find the first "
                 "cell that differs; its recurrence or initialisation is the bug. `bazel run "
                 "//tools:progress -- --hint dp."
              << request.problem << "` gives a hint.\n\n";
}

std::string random_word(Rng& rng, int length) {
  std::string out;
  for (int i = 0; i < length; ++i) out += static_cast<char>('a' + rng.uniform_int(0, 1));
  return out;
}

int tour() {
  std::cout << "tour-config: 12 | explain --tour: the tables of 115, 72 and 322, then LeetCode 115 "
               "brute force against "
            << (exercise_track() ? "your DP" : "the reference DP")
            << " on random two-letter strings s of 12 to 24 letters\n";
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"115", "rabbbit", "rabbit"}, {"72", "horse", "ros"}, {"322", "11", "1,2,5"}})
    print(explain::parse(args));

  // Brute force (every subset of positions of s) against your DP, on one input per size.
  Table timing({"length of s", "length of t", "count", "brute force (ms)",
                exercise_track() ? "your DP (µs)" : "DP (µs)", "ratio"});
  Rng rng(12);
  std::string ratio_at_largest = "not started (dp.115)", sizes;
  for (int n : {12, 16, 20, 24}) {
    const std::string s = random_word(rng, n), t = random_word(rng, n / 3);
    sizes = "s of " + std::to_string(n) + ", t of " + std::to_string(n / 3) + " letters";
    const double brute_s = median_seconds([&] { (void)brute::num_distinct(s, t); }, 3);
    std::string dp_cell = "not started", ratio = "-",
                count = std::to_string(brute::num_distinct(s, t));
    try {
      // One call takes well under a microsecond: time batches of 1000 so the clock's own cost
      // (tens of nanoseconds) does not dominate.
      constexpr int kBatch = 1000;
      std::uint64_t sink = 0;
      const double dp_s = median_seconds(
                              [&] {
                                for (int k = 0; k < kBatch; ++k) sink += num_distinct(s, t);
                              },
                              21) /
                          kBatch;
      if (sink == 42) std::cout << "";  // keeps the calls from being optimised away
      dp_cell = fixed(dp_s * 1e6, 3);
      ratio = fixed(brute_s / dp_s, 0);
      if (num_distinct(s, t) != brute::num_distinct(s, t)) ratio = "WRONG ANSWER";
      ratio_at_largest =
          ratio + "× (" + fixed(brute_s * 1e3, 1) + " ms vs " + fixed(dp_s * 1e6, 3) + " µs)";
    } catch (const NotImplemented&) {
    }
    timing.add_row(
        {std::to_string(n), std::to_string(n / 3), count, fixed(brute_s * 1e3, 2), dp_cell, ratio});
  }
  std::cout << "## Brute force vs DP on LeetCode 115 (median of repeats, this machine)\n\n"
            << timing.markdown() << "\n";
  const std::string dir = results_dir();
  timing.write_csv(dir + "/ch12_explain_115_timing.csv");
  timing.write_json(dir + "/ch12_explain_115_timing.json");
  std::cout << "tour: 12 | brute force vs DP time, LeetCode 115 (" << sizes << ") | "
            << ratio_at_largest << " | enumeration O(2^n·n) vs table O(n·m)\n";
  const auto table_72 = explain::fill(explain::parse({"72", "horse", "ros"}));
  std::cout << "tour: 12 | dp cells filled for 72 (\"horse\" -> \"ros\") | "
            << table_72.table.rows().size() * (table_72.table.columns().size() - 1)
            << " cells, answer " << table_72.answer << " | (m+1)(n+1) states, O(1) work each\n";
  return 0;
}

int body(int argc, char** argv) {
  const explain::Command command = explain::parse_command({argv + 1, argv + argc});
  print_machine_load();
  if (command.tour) return tour();
  print(command.request);
  return 0;
}

}  // namespace
}  // namespace book::dynprog

int main(int argc, char** argv) { return book::run_main(argc, argv, book::dynprog::body); }
