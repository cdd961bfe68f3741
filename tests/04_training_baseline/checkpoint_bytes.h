// Checkpoint files built byte by byte, for the tests that hand the reader hostile files: the
// layout of checkpoint.h written out here independently, so a test can plant a size, a name or a
// payload the writer would never produce and still give it a valid checksum. Chapters 5 and 6's
// tests use it too, to damage their trainers' checkpoints one section at a time.
#pragma once

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "chapters/04_training_baseline/checkpoint.h"

namespace book::train::testing {

using Bytes = std::vector<std::uint8_t>;

/// One section as it sits in the payload: its name and its bytes.
struct Section {
  std::string name;
  Bytes bytes;
};

/// Appends `value`'s bytes (little-endian on the machines the book runs on).
template <typename T>
void append(Bytes& out, T value) {
  const auto* p = reinterpret_cast<const std::uint8_t*>(&value);
  out.insert(out.end(), p, p + sizeof(T));
}

/// The payload of `sections`: name length (u32), name, size (u64), bytes, for each.
inline Bytes payload_of(const std::vector<Section>& sections) {
  Bytes payload;
  for (const Section& s : sections) {
    append<std::uint32_t>(payload, static_cast<std::uint32_t>(s.name.size()));
    payload.insert(payload.end(), s.name.begin(), s.name.end());
    append<std::uint64_t>(payload, s.bytes.size());
    payload.insert(payload.end(), s.bytes.begin(), s.bytes.end());
  }
  return payload;
}

/// A whole file around `payload`: magic, version, the payload size (as given, so a test can
/// lie about it), the payload, and its true checksum.
inline Bytes file_of(const Bytes& payload, std::uint64_t claimed_size,
                     std::uint32_t version = kCheckpointVersion) {
  Bytes file = {'B', 'O', 'O', 'K', 'C', 'K', 'P', 'T'};
  append<std::uint32_t>(file, version);
  append<std::uint64_t>(file, claimed_size);
  file.insert(file.end(), payload.begin(), payload.end());
  append<std::uint64_t>(file, fnv1a64(payload));
  return file;
}

/// The same with the payload's true size.
inline Bytes file_of(const Bytes& payload) { return file_of(payload, payload.size()); }

/// Every section of a checkpoint the reader accepts, in file order.
inline std::vector<Section> sections_of(const std::string& path) {
  const CheckpointReader reader(path);
  std::vector<Section> sections;
  for (const std::string& name : reader.section_names()) {
    const auto bytes = reader.get(name);
    sections.push_back({name, Bytes(bytes.begin(), bytes.end())});
  }
  return sections;
}

/// The file's bytes.
inline Bytes read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

/// Replaces the file with `bytes`.
inline void write_bytes(const std::string& path, const Bytes& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
}

/// Section `name`'s bytes as an array of T (the test's own view of a value it planted).
template <typename T>
std::vector<T> as_array(const Bytes& bytes) {
  std::vector<T> values(bytes.size() / sizeof(T));
  std::memcpy(values.data(), bytes.data(), values.size() * sizeof(T));
  return values;
}

/// An array of T as section bytes.
template <typename T>
Bytes as_bytes(const std::vector<T>& values) {
  Bytes bytes(values.size() * sizeof(T));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

/// Section `name` of the checkpoint at `path`, as an array of T.
template <typename T>
std::vector<T> read_section(const std::string& path, const std::string& name) {
  const CheckpointReader reader(path);
  const auto bytes = reader.get(name);
  return as_array<T>(Bytes(bytes.begin(), bytes.end()));
}

/// Rewrites the checkpoint at `path` with section `name` holding `values` instead: the file stays
/// well-formed, with a valid checksum, so only the loader's later checks can refuse it.
template <typename T>
void replace_section(const std::string& path, const std::string& name,
                     const std::vector<T>& values) {
  std::vector<Section> sections = sections_of(path);
  bool found = false;
  for (Section& section : sections)
    if (section.name == name) {
      section.bytes = as_bytes(values);
      found = true;
    }
  if (!found) throw std::logic_error("replace_section: " + path + " has no section " + name);
  write_bytes(path, file_of(payload_of(sections)));
}

}  // namespace book::train::testing
