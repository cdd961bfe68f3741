#include "chapters/04_training_baseline/checkpoint.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "common/check.h"

namespace book::train {
namespace {

constexpr char kMagic[8] = {'B', 'O', 'O', 'K', 'C', 'K', 'P', 'T'};
constexpr std::size_t kHeader = 8 + 4 + 8, kTrailer = 8;

template <typename T>
void put(std::vector<std::uint8_t>& out, T value) {
  const auto* p = reinterpret_cast<const std::uint8_t*>(&value);
  out.insert(out.end(), p, p + sizeof(T));
}

template <typename T>
T get_at(const std::vector<std::uint8_t>& in, std::size_t offset) {
  T value;
  std::memcpy(&value, in.data() + offset, sizeof(T));
  return value;
}

// fail_next_checkpoint_write_after's budget; negative: none pending.
std::atomic<std::int64_t> write_budget{-1};

// ::write, with the full-disk seam: no more than `room` bytes of the file in all, then -1 with
// errno ENOSPC, as a disk that filled up.
ssize_t write_within(int fd, const std::uint8_t* data, std::size_t size, std::size_t written,
                     std::size_t room) {
  if (written >= room) {
    errno = ENOSPC;
    return -1;
  }
  return ::write(fd, data, std::min(size, room - written));
}

}  // namespace

void fail_next_checkpoint_write_after(std::int64_t bytes) { write_budget.store(bytes); }

std::uint64_t fnv1a64(std::span<const std::uint8_t> bytes) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (std::uint8_t b : bytes) hash = (hash ^ b) * 0x100000001b3ULL;
  return hash;
}

void CheckpointWriter::add(const std::string& name, std::span<const std::uint8_t> bytes) {
  for (const auto& section : sections_)
    BOOK_CHECK(section.first != name, "CheckpointWriter: section '" << name << "' added twice");
  sections_.emplace_back(name, std::vector<std::uint8_t>(bytes.begin(), bytes.end()));
}

void CheckpointWriter::write_atomically(const std::string& path) const {
  std::vector<std::uint8_t> payload;
  for (const auto& [name, bytes] : sections_) {
    put<std::uint32_t>(payload, static_cast<std::uint32_t>(name.size()));
    payload.insert(payload.end(), name.begin(), name.end());
    put<std::uint64_t>(payload, bytes.size());
    payload.insert(payload.end(), bytes.begin(), bytes.end());
  }
  std::vector<std::uint8_t> file(kMagic, kMagic + 8);
  put<std::uint32_t>(file, kCheckpointVersion);
  put<std::uint64_t>(file, payload.size());
  file.insert(file.end(), payload.begin(), payload.end());
  put<std::uint64_t>(file, fnv1a64(payload));

  std::error_code error;
  BOOK_CHECK(!std::filesystem::is_directory(path, error),
             "cannot write checkpoint " << path << ": it is a directory; give a file name");
  const std::int64_t budget = write_budget.exchange(-1);  // the full-disk seam, if armed
  const std::size_t room = budget < 0 ? file.size() : static_cast<std::size_t>(budget);
  //! [atomic_write]
  const std::string temp = path + ".tmp";
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  BOOK_CHECK(fd >= 0, "cannot write checkpoint " << temp << ": " << std::strerror(errno));
  // From here on a failure removes the temporary: a failed save leaves nothing behind.
  const auto fail = [&](const std::string& what, int error_number, bool open) {
    if (open) ::close(fd);
    ::unlink(temp.c_str());
    throw Error(what + ": " + std::strerror(error_number));
  };
  std::size_t written = 0;
  while (written < file.size()) {
    const ssize_t n = write_within(fd, file.data() + written, file.size() - written, written, room);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("writing checkpoint " + temp + " failed", n < 0 ? errno : ENOSPC, true);
    written += static_cast<std::size_t>(n);
  }
  // fsync before rename: otherwise a crash could leave the new name pointing at unwritten blocks.
  if (::fsync(fd) != 0) fail("fsync of checkpoint " + temp + " failed", errno, true);
  if (::close(fd) != 0) fail("closing checkpoint " + temp + " failed", errno, false);
  if (::rename(temp.c_str(), path.c_str()) != 0)
    fail("renaming " + temp + " to " + path + " failed", errno, false);
  // fsync the folder so the rename itself survives a crash.
  const auto folder = std::filesystem::absolute(path).parent_path();
  if (const int dir = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY); dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
  //! [atomic_write]
}

namespace {

// The whole file, read with POSIX calls so that a directory, a device or a read error is this
// book's error rather than an iostream exception or a silently empty buffer. Opened with
// O_NONBLOCK: opening a named pipe for reading otherwise blocks until someone writes to it (a
// hang, not an error), and fstat can only say "not a regular file" once open has returned. A
// regular file ignores the flag.
std::vector<std::uint8_t> read_whole_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK);
  BOOK_CHECK(fd >= 0, "cannot open checkpoint " << path << ": " << std::strerror(errno)
                                                << " (does the file exist?)");
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    const bool directory = S_ISDIR(info.st_mode);
    ::close(fd);
    BOOK_CHECK(false, "cannot read checkpoint "
                          << path << ": it is "
                          << (directory ? "a directory" : "not a regular file")
                          << "; give the checkpoint file itself");
  }
  std::vector<std::uint8_t> file(static_cast<std::size_t>(info.st_size));
  std::size_t got = 0;
  while (got < file.size()) {
    const ssize_t n = ::read(fd, file.data() + got, file.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = n < 0 ? errno : 0;
      ::close(fd);
      BOOK_CHECK(false, "reading checkpoint " << path << " failed after " << got << " of "
                                              << file.size() << " bytes"
                                              << (error ? std::string(": ") + std::strerror(error)
                                                        : std::string(" (it shrank)")));
    }
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  return file;
}

}  // namespace

CheckpointReader::CheckpointReader(const std::string& path) : path_(path) {
  const std::vector<std::uint8_t> file = read_whole_file(path);
  BOOK_CHECK(file.size() >= kHeader + kTrailer && std::memcmp(file.data(), kMagic, 8) == 0,
             "checkpoint " << path << " is not a checkpoint of this book (no BOOKCKPT header; "
                           << file.size() << " bytes)");
  const auto version = get_at<std::uint32_t>(file, 8);
  BOOK_CHECK(version == kCheckpointVersion, "checkpoint " << path << " has format version "
                                                          << version << ", this code reads version "
                                                          << kCheckpointVersion);
  // Every size read from the file is compared with the bytes that remain, never added to an
  // offset first: a corrupted size near 2^64 would wrap around and pass.
  const auto payload_size = get_at<std::uint64_t>(file, 12);
  const std::size_t available = file.size() - kHeader - kTrailer;
  BOOK_CHECK(payload_size == available,
             "checkpoint " << path << " is truncated or has trailing bytes: the header promises a "
                           << payload_size << "-byte payload, the file has room for " << available
                           << " (was the write interrupted? use an older checkpoint)");
  payload_.assign(file.begin() + kHeader, file.begin() + kHeader + available);
  const auto stored = get_at<std::uint64_t>(file, kHeader + available);
  const auto actual = fnv1a64(payload_);
  BOOK_CHECK(stored == actual, "checkpoint " << path << " is corrupted: checksum " << std::hex
                                             << actual << " does not match the stored " << stored);
  std::size_t at = 0;
  while (at < payload_.size()) {
    const std::size_t left = payload_.size() - at;
    BOOK_CHECK(left >= 4 + 8, "checkpoint " << path << ": malformed section header at byte " << at
                                            << " (" << left << " bytes left)");
    const std::uint64_t name_size = get_at<std::uint32_t>(payload_, at);
    BOOK_CHECK(name_size <= left - 4 - 8, "checkpoint " << path << ": section name of " << name_size
                                                        << " bytes at byte " << at
                                                        << " overruns the payload");
    std::string name(payload_.begin() + at + 4, payload_.begin() + at + 4 + name_size);
    const auto size = get_at<std::uint64_t>(payload_, at + 4 + name_size);
    const std::size_t data = at + 4 + name_size + 8;
    BOOK_CHECK(size <= payload_.size() - data,
               "checkpoint " << path << ": section '" << name << "' claims " << size
                             << " bytes but only " << payload_.size() - data << " remain");
    for (const auto& [seen, where] : index_)
      BOOK_CHECK(seen != name, "checkpoint " << path << ": section '" << name
                                             << "' appears twice; a writer adds each once");
    index_.push_back({name, {data, size}});
    at = data + size;
  }
}

std::vector<std::string> CheckpointReader::section_names() const {
  std::vector<std::string> names;
  for (const auto& section : index_) names.push_back(section.first);
  return names;
}

std::span<const std::uint8_t> CheckpointReader::get(const std::string& name) const {
  for (const auto& [n, where] : index_)
    if (n == name) return {payload_.data() + where.first, where.second};
  BOOK_CHECK(false, "checkpoint " << path_ << " has no section '" << name << "'");
}

void CheckpointReader::copy_into(const std::string& name, std::uint8_t* out,
                                 std::size_t size) const {
  const auto bytes = get(name);
  BOOK_CHECK(bytes.size() == size, "checkpoint " << path_ << ": section '" << name << "' has "
                                                 << bytes.size() << " bytes, expected " << size
                                                 << " (was it written for another model config?)");
  std::memcpy(out, bytes.data(), size);
}

}  // namespace book::train
