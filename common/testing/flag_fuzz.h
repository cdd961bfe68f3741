/// @file
/// A seeded fuzzer for a stage's command line (issue 19): thousands of argument lists built from
/// the stage's own valid arguments, mutated with hostile values, split, duplicated, truncated and
/// shuffled. Every one must parse or be refused with a book::Error that says something (the
/// defects it keeps fixed printed only "stoi", "stoul" or "std::bad_alloc", or ignored the
/// flag); `--help` may answer with book::HelpRequested. Anything else thrown fails the test, with
/// the argument list printed. A hang or crash fails it too, by the test's timeout or signal.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <exception>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "common/check.h"
#include "common/flags.h"
#include "common/rng.h"

namespace book::testing {

/// What fuzz_command_line() saw: how many argument lists parsed, and how many were refused.
struct FlagFuzzCounts {
  int parsed = 0;   ///< argument lists the parser accepted
  int refused = 0;  ///< argument lists refused with a book::Error (or HelpRequested)
};

/// Feeds `parse` `iterations` argument lists (program name excluded) made from `valid`, the
/// stage's valid arguments ("--steps=50", "--tour", "--sizes=64,128"), with `seed`. Fails the
/// running test for each list that throws anything but a book::Error with a message of at least
/// 10 characters (or book::HelpRequested), and prints that list. Returns the counts, so a caller
/// can check that both outcomes were exercised.
inline FlagFuzzCounts fuzz_command_line(
    const std::function<void(const std::vector<std::string>&)>& parse,
    const std::vector<std::string>& valid, int iterations, std::uint64_t seed) {
  static const std::vector<std::string> kHostileValues = {"",
                                                          "-1",
                                                          "0",
                                                          "1e3",
                                                          "5x",
                                                          "abc",
                                                          "99999999999999999999",
                                                          "-9223372036854775809",
                                                          "nan",
                                                          "inf",
                                                          "-inf",
                                                          "0x10",
                                                          " 7",
                                                          "7 ",
                                                          "1,,2",
                                                          ",",
                                                          "=",
                                                          "--",
                                                          "-",
                                                          "1.5",
                                                          "+3",
                                                          "007",
                                                          std::string(300, '9'),
                                                          "true",
                                                          "false",
                                                          "\xff\xfe",
                                                          "2147483648",
                                                          "-2147483649",
                                                          "1e309",
                                                          "4097"};
  Rng rng(seed);
  auto pick = [&](const std::vector<std::string>& from) -> const std::string& {
    return from[static_cast<std::size_t>(
        rng.uniform_int(0, static_cast<std::int64_t>(from.size()) - 1))];
  };
  FlagFuzzCounts counts;
  for (int iteration = 0; iteration < iterations; ++iteration) {
    std::vector<std::string> arguments;
    const int length = static_cast<int>(rng.uniform_int(0, 5));
    for (int i = 0; i < length; ++i) {
      std::string argument = pick(valid);
      const std::size_t equals = argument.find('=');
      switch (rng.uniform_int(0, 7)) {
        case 0:  // a valid argument as it is
          break;
        case 1:  // a hostile value
          argument = (equals == std::string::npos ? argument : argument.substr(0, equals)) + "=" +
                     pick(kHostileValues);
          break;
        case 2:  // the flag and its value as two arguments, or the value missing
          if (equals != std::string::npos) {
            arguments.push_back(argument.substr(0, equals));
            argument = rng.uniform() < 0.5 ? argument.substr(equals + 1) : pick(kHostileValues);
          }
          break;
        case 3:  // the flag's name cut short, or a letter changed
          argument = argument.substr(0, static_cast<std::size_t>(rng.uniform_int(
                                            0, static_cast<std::int64_t>(argument.size()))));
          break;
        case 4:  // an unknown flag
          argument = "--" + pick(kHostileValues);
          break;
        case 5:  // a bare hostile value (a positional the stage may not take)
          argument = pick(kHostileValues);
          break;
        case 6:  // one dash
          if (argument.rfind("--", 0) == 0) argument = argument.substr(1);
          break;
        default:  // the flag without its value
          if (equals != std::string::npos) argument = argument.substr(0, equals);
          break;
      }
      arguments.push_back(std::move(argument));
    }
    auto describe = [&] {
      std::ostringstream out;
      for (const std::string& a : arguments) out << " '" << a << "'";
      return out.str();
    };
    try {
      parse(arguments);
      ++counts.parsed;
    } catch (const HelpRequested&) {
      ++counts.refused;
    } catch (const Error& e) {
      ++counts.refused;
      EXPECT_GE(std::string(e.what()).size(), 10u)
          << "a refusal that says too little: '" << e.what() << "' for" << describe();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "not a book::Error (" << e.what() << ") for" << describe();
    } catch (...) {
      ADD_FAILURE() << "a non-standard exception for" << describe();
    }
  }
  return counts;
}

}  // namespace book::testing
