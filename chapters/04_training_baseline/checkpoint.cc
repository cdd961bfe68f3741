#include "chapters/04_training_baseline/checkpoint.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

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

}  // namespace

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

  //! [atomic_write]
  const std::string temp = path + ".tmp";
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  BOOK_CHECK(fd >= 0, "cannot write checkpoint " << temp << ": " << std::strerror(errno));
  std::size_t written = 0;
  while (written < file.size()) {
    const ssize_t n = ::write(fd, file.data() + written, file.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = errno;
      ::close(fd);
      BOOK_CHECK(false, "writing checkpoint " << temp << " failed: " << std::strerror(error));
    }
    written += static_cast<std::size_t>(n);
  }
  // fsync before rename: otherwise a crash could leave the new name pointing at unwritten blocks.
  const bool synced = ::fsync(fd) == 0;
  ::close(fd);
  BOOK_CHECK(synced, "fsync of checkpoint " << temp << " failed: " << std::strerror(errno));
  BOOK_CHECK(::rename(temp.c_str(), path.c_str()) == 0,
             "renaming " << temp << " to " << path << " failed: " << std::strerror(errno));
  // fsync the folder so the rename itself survives a crash.
  const auto folder = std::filesystem::absolute(path).parent_path();
  if (const int dir = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY); dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
  //! [atomic_write]
}

CheckpointReader::CheckpointReader(const std::string& path) : path_(path) {
  std::ifstream in(path, std::ios::binary);
  BOOK_CHECK(in.good(), "cannot open checkpoint " << path << ": does the file exist?");
  std::vector<std::uint8_t> file((std::istreambuf_iterator<char>(in)),
                                 std::istreambuf_iterator<char>());
  BOOK_CHECK(file.size() >= kHeader && std::memcmp(file.data(), kMagic, 8) == 0,
             "checkpoint " << path << " is not a checkpoint of this book (no BOOKCKPT header; "
                           << file.size() << " bytes)");
  const auto version = get_at<std::uint32_t>(file, 8);
  BOOK_CHECK(version == kCheckpointVersion, "checkpoint " << path << " has format version "
                                                          << version << ", this code reads version "
                                                          << kCheckpointVersion);
  const auto payload_size = get_at<std::uint64_t>(file, 12);
  BOOK_CHECK(file.size() == kHeader + payload_size + kTrailer,
             "checkpoint " << path << " is truncated or has trailing bytes: the header promises "
                           << kHeader + payload_size + kTrailer << " bytes, the file has "
                           << file.size()
                           << " (was the write interrupted? use an older checkpoint)");
  payload_.assign(file.begin() + kHeader, file.begin() + kHeader + payload_size);
  const auto stored = get_at<std::uint64_t>(file, kHeader + payload_size);
  const auto actual = fnv1a64(payload_);
  BOOK_CHECK(stored == actual, "checkpoint " << path << " is corrupted: checksum " << std::hex
                                             << actual << " does not match the stored " << stored);
  std::size_t at = 0;
  while (at < payload_.size()) {
    BOOK_CHECK(at + 4 <= payload_.size(), "checkpoint " << path << ": malformed section header");
    const auto name_size = get_at<std::uint32_t>(payload_, at);
    BOOK_CHECK(at + 4 + name_size + 8 <= payload_.size(),
               "checkpoint " << path << ": malformed section");
    std::string name(payload_.begin() + at + 4, payload_.begin() + at + 4 + name_size);
    const auto size = get_at<std::uint64_t>(payload_, at + 4 + name_size);
    const std::size_t data = at + 4 + name_size + 8;
    BOOK_CHECK(data + size <= payload_.size(),
               "checkpoint " << path << ": section " << name << " overruns");
    index_.push_back({name, {data, size}});
    at = data + size;
  }
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
