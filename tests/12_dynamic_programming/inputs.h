// Seeded random inputs and printing helpers shared by chapter 12's tests.
#pragma once

#include <optional>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "common/rng.h"

namespace book::dynprog::testing {

/// `length` integers uniform in [lo, hi].
inline std::vector<int> random_ints(Rng& rng, std::int64_t length, int lo, int hi) {
  std::vector<int> out(length);
  for (auto& x : out) x = static_cast<int>(rng.uniform_int(lo, hi));
  return out;
}

/// `length` letters from the first `letters` of the alphabet (few letters: many matches).
inline std::string random_string(Rng& rng, std::int64_t length, int letters) {
  std::string out;
  for (std::int64_t i = 0; i < length; ++i)
    out += static_cast<char>('a' + rng.uniform_int(0, letters - 1));
  return out;
}

/// `{1, 2, 3}` for a failure message.
template <typename T>
std::string show(const std::vector<T>& values) {
  std::ostringstream out;
  out << "{";
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i) out << ", ";
    if constexpr (std::is_same_v<T, std::string>)
      out << '"' << values[i] << '"';
    else if constexpr (std::is_same_v<T, std::optional<int>>)
      values[i] ? out << *values[i] : out << "null";
    else if constexpr (std::is_same_v<T, std::vector<int>>)
      out << show(values[i]);
    else
      out << values[i];
  }
  out << "}";
  return out.str();
}

}  // namespace book::dynprog::testing
