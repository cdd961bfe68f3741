/// @file
/// Public enums are checked where they enter. An enum is a set of names, but C++ lets any integer
/// be cast into one (`Algorithm(42)`, or a field read from a file or a wire), and a switch with a
/// `default:` then runs something silently: a collective that does nothing, a sum for an unknown
/// operation, a training run with no gradient synchronisation. So every public function that
/// takes one of the book's enums checks it first with check_enum, and a switch over one lists
/// every value and ends in an error, never a silent default.
#pragma once

#include <type_traits>

#include "common/check.h"

namespace book {

/// Throws book::Error unless `value` is one of the consecutive values `first` … `last` of its
/// enum, naming the enum (`type`, e.g. "coll::Algorithm"), the value and the range, and `where`
/// it was passed (e.g. "Communicator::all_reduce").
template <typename E>
void check_enum(E value, E first, E last, const char* type, const char* where) {
  static_assert(std::is_enum_v<E>, "check_enum checks enums");
  using U = std::underlying_type_t<E>;
  const auto v = static_cast<long long>(static_cast<U>(value));
  const auto lo = static_cast<long long>(static_cast<U>(first));
  const auto hi = static_cast<long long>(static_cast<U>(last));
  BOOK_CHECK(v >= lo && v <= hi, where << ": " << type << "(" << v << ") is not a value of "
                                       << type << " (" << lo << " to " << hi
                                       << "): an integer cast to the enum, or a damaged field?");
}

}  // namespace book
