/// @file
/// A checkpoint file: named binary sections, a format version, a checksum, written atomically.
///
/// Layout: "BOOKCKPT" (8 bytes), format version (u32), payload size (u64), the payload (sections:
/// name length u32, name, size u64, bytes), FNV-1a 64 checksum of the payload (u64); little-endian.
/// A crash mid-write must never leave a half-written file under the real name, so the writer
/// writes a temporary file, fsyncs it, renames it over the target (atomic on POSIX) and fsyncs
/// the folder; a save that fails removes its temporary file. The reader refuses a directory, a
/// wrong magic, an unknown version, a truncated file, a checksum mismatch, a section whose size
/// overruns the bytes that remain (every size read from the file is checked against them before
/// it is used, so a corrupted size can neither wrap around nor make the reader loop) and a
/// section name that appears twice, with an error saying which.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace book::train {

/// The format version this code writes and reads.
inline constexpr std::uint32_t kCheckpointVersion = 1;

/// FNV-1a, 64 bits: simple, byte-order free, enough to catch corruption (not an attacker).
std::uint64_t fnv1a64(std::span<const std::uint8_t> bytes);

/// Collects sections, then writes them atomically.
class CheckpointWriter {
 public:
  /// Adds a section of raw bytes; names must be unique.
  void add(const std::string& name, std::span<const std::uint8_t> bytes);
  /// Adds a section holding a trivially copyable array.
  template <typename T>
  void add_array(const std::string& name, std::span<const T> values) {
    add(name, {reinterpret_cast<const std::uint8_t*>(values.data()), values.size_bytes()});
  }
  /// Adds a section holding one trivially copyable value.
  template <typename T>
  void add_value(const std::string& name, const T& value) {
    add_array<T>(name, std::span<const T>(&value, 1));
  }
  /// Writes path + ".tmp", fsyncs, renames it to `path`, fsyncs the folder. Throws book::Error
  /// if `path` is a directory or any step fails; the temporary file is removed then.
  void write_atomically(const std::string& path) const;

 private:
  std::vector<std::pair<std::string, std::vector<std::uint8_t>>> sections_;
};

/// A seam for tests and failure drills: a full disk on demand. The next write_atomically in this
/// process writes at most `bytes` bytes of its temporary file and then fails as a full disk does
/// (ENOSPC), so a test can check that a failed save leaves the previous checkpoint intact. One
/// shot: the write after it is unlimited again. A negative `bytes` cancels a pending one.
void fail_next_checkpoint_write_after(std::int64_t bytes);

/// Reads and verifies a checkpoint file, then hands out its sections.
class CheckpointReader {
 public:
  /// Reads and verifies the whole of `path`; throws book::Error if it is missing, not a regular
  /// file, truncated, corrupted, of another version, or has a malformed or repeated section.
  explicit CheckpointReader(const std::string& path);
  /// The names of the sections, in file order.
  std::vector<std::string> section_names() const;
  /// The bytes of section `name`; throws book::Error if there is none.
  std::span<const std::uint8_t> get(const std::string& name) const;
  /// Copies section `name` into `out`, which must have exactly its size.
  template <typename T>
  void read_array(const std::string& name, std::span<T> out) const {
    copy_into(name, reinterpret_cast<std::uint8_t*>(out.data()), out.size_bytes());
  }
  /// Section `name` as one value of type T.
  template <typename T>
  T read_value(const std::string& name) const {
    T value;
    copy_into(name, reinterpret_cast<std::uint8_t*>(&value), sizeof(T));
    return value;
  }

 private:
  void copy_into(const std::string& name, std::uint8_t* out, std::size_t size) const;
  std::string path_;
  std::vector<std::uint8_t> payload_;
  std::vector<std::pair<std::string, std::pair<std::size_t, std::size_t>>> index_;  // offset, size
};

}  // namespace book::train
