/// @file
/// A small JSON reader for the tools (Bazel's build-event stream): enough to walk objects,
/// arrays, strings, numbers (kept as text), booleans and null.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace book::tools {

/// One JSON value.
struct Json {
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };
  Kind kind = Kind::kNull;              ///< which of the members below holds the value
  bool boolean = false;                 ///< kBool
  std::string text;                     ///< kString (decoded) or kNumber (as written)
  std::vector<Json> items;              ///< kArray
  std::map<std::string, Json> members;  ///< kObject

  /// The member `key` of an object, or a shared null value when absent or not an object.
  const Json& operator[](const std::string& key) const;
  /// Whether this object has member `key`.
  bool has(const std::string& key) const;
  /// The string or number text; "" for anything else.
  const std::string& str() const { return text; }
};

/// Parses one JSON document.
/// @throws book::Error saying where the text stops being JSON.
Json parse_json(std::string_view text);

}  // namespace book::tools
