/// @file
/// The book's defaults for a Google Benchmark command line: every benchmark repeated 5 times,
/// the repetitions of all benchmarks run in a random interleaved order (so a change in a shared
/// machine's load hits ours and the peer's alike), and only the aggregates and our own tables
/// reported. A flag the user passes wins over its default.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace book {

/// Google Benchmark's argc/argv with the book's defaults added where the user gave no value.
class BenchArgs {
 public:
  /// How many repetitions each benchmark runs by default (its median is what the tables show).
  static constexpr int kRepetitions = 5;

  /// Copies argv and appends --benchmark_repetitions=5 and
  /// --benchmark_enable_random_interleaving=true unless argv already sets them.
  BenchArgs(int argc, char** argv) {
    for (int i = 0; i < argc; ++i) strings_.emplace_back(argv[i]);
    add_default("--benchmark_repetitions", std::to_string(kRepetitions));
    add_default("--benchmark_enable_random_interleaving", "true");
    for (std::string& s : strings_) pointers_.push_back(s.data());
    pointers_.push_back(nullptr);
    argc_ = static_cast<int>(strings_.size());
  }
  BenchArgs(const BenchArgs&) = delete;             ///< argv() points into this object.
  BenchArgs& operator=(const BenchArgs&) = delete;  ///< argv() points into this object.

  /// For benchmark::Initialize(&args.argc(), args.argv()).
  int& argc() { return argc_; }
  /// For benchmark::Initialize(&args.argc(), args.argv()).
  char** argv() { return pointers_.data(); }

 private:
  void add_default(std::string_view flag, const std::string& value) {
    for (const std::string& s : strings_)
      if (s.starts_with(flag) && (s.size() == flag.size() || s[flag.size()] == '=')) return;
    strings_.push_back(std::string(flag) + "=" + value);
  }

  std::vector<std::string> strings_;
  std::vector<char*> pointers_;
  int argc_ = 0;
};

}  // namespace book
