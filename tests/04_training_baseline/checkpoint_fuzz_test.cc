// A fuzz test of the checkpoint reader and Trainer::load: a real checkpoint, mutated thousands of
// times with a fixed seed — random bit flips, overwrites, truncations and insertions (half of them
// given a fresh valid checksum, so they reach the section parser), and structure-aware mutations
// (section sizes and name lengths set to 0, one off, 2^32, 2^63, 2^64 - k; sections dropped,
// repeated, swapped, renamed, resized; NaN, infinities and extreme integers planted in the
// values; another version, magic or payload size). For every file:
//   - the reader and load() return or throw a book::Error whose message names the file: never
//     another exception, a crash, a hang, or (under --config=asan) a sanitizer report;
//   - a refused load leaves the trainer exactly as it was (all or nothing);
//   - an accepted one leaves a trainer whose next step runs or throws a book::Error.
// Bounded: kIterations files or kBudget of wall time, whichever comes first (the log says how many
// ran). BOOK_FUZZ_SEED and BOOK_FUZZ_ITERATIONS change both for a longer run at home.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <typeinfo>
#include <vector>

#include "chapters/04_training_baseline/checkpoint.h"
#include "chapters/04_training_baseline/trainer.h"
#include "common/rng.h"
#include "tests/04_training_baseline/checkpoint_bytes.h"

namespace book::train {
namespace {

using testing::Bytes;
using testing::Section;

constexpr int kIterations = 3000;
constexpr auto kBudget = std::chrono::seconds(60);

std::uint64_t env_or(const char* name, std::uint64_t fallback) {
  const char* value = std::getenv(name);
  return value && *value ? std::strtoull(value, nullptr, 10) : fallback;
}

TrainOptions tiny_options() {
  TrainOptions o;
  o.digits = 2;
  o.model.n_layer = 1;
  o.model.d_model = 8;
  o.model.n_head = 2;
  o.micro_batch = 2;
  o.total_steps = 20;
  o.warmup_steps = 2;
  return o;
}

// Sizes that have broken readers: empty, one off, the 32-bit edge, and values whose sum with an
// offset wraps around 2^64.
std::uint64_t interesting_size(Rng& rng, std::uint64_t truth) {
  const std::uint64_t picks[] = {0,
                                 1,
                                 truth - 1,
                                 truth + 1,
                                 std::uint64_t{1} << 32,
                                 (std::uint64_t{1} << 32) - 1,
                                 std::uint64_t{1} << 63,
                                 std::numeric_limits<std::uint64_t>::max(),
                                 std::numeric_limits<std::uint64_t>::max() - 12,
                                 std::numeric_limits<std::uint64_t>::max() - 17,
                                 std::numeric_limits<std::uint64_t>::max() - rng.next_u64() % 64,
                                 rng.next_u64()};
  return picks[rng.next_u64() % std::size(picks)];
}

float interesting_float(Rng& rng) {
  const float picks[] = {std::numeric_limits<float>::quiet_NaN(),
                         std::numeric_limits<float>::infinity(),
                         -std::numeric_limits<float>::infinity(),
                         std::numeric_limits<float>::max(),
                         -std::numeric_limits<float>::max(),
                         std::numeric_limits<float>::denorm_min(),
                         -0.0f,
                         -1.0f,
                         0.0f,
                         1e30f};
  return picks[rng.next_u64() % std::size(picks)];
}

std::int64_t interesting_int(Rng& rng) {
  const std::int64_t picks[] = {std::numeric_limits<std::int64_t>::min(),
                                std::numeric_limits<std::int64_t>::max(),
                                std::numeric_limits<std::int32_t>::min(),
                                std::numeric_limits<std::int32_t>::max(),
                                -1,
                                0,
                                1,
                                3,
                                1 << 20};
  return picks[rng.next_u64() % std::size(picks)];
}

// Where each section's name-length and size fields sit in the payload.
struct Fields {
  std::size_t name_length_at, size_at;
};

std::vector<Fields> fields_of(const std::vector<Section>& sections) {
  std::vector<Fields> fields;
  std::size_t at = 0;
  for (const Section& s : sections) {
    fields.push_back({at, at + 4 + s.name.size()});
    at += 4 + s.name.size() + 8 + s.bytes.size();
  }
  return fields;
}

template <typename T>
void poke(Bytes& bytes, std::size_t at, T value) {
  std::memcpy(bytes.data() + at, &value, sizeof(T));
}

// Byte-level damage: flips, overwrites, truncation, growth, deletion, insertion.
void damage(Rng& rng, Bytes& bytes) {
  const auto pick = [&](std::size_t n) { return n ? rng.next_u64() % n : 0; };
  switch (rng.next_u64() % 6) {
    case 0:
      for (int i = 1 + static_cast<int>(pick(8)); i > 0 && !bytes.empty(); --i)
        bytes[pick(bytes.size())] ^= static_cast<std::uint8_t>(1u << pick(8));
      break;
    case 1:
      for (std::size_t at = pick(bytes.size()), n = 1 + pick(16); n > 0 && at < bytes.size();
           --n, ++at)
        bytes[at] = static_cast<std::uint8_t>(rng.next_u64());
      break;
    case 2:
      bytes.resize(pick(bytes.size() + 1));
      break;
    case 3:
      for (std::size_t n = 1 + pick(64); n > 0; --n)
        bytes.push_back(static_cast<std::uint8_t>(rng.next_u64()));
      break;
    case 4:
      if (!bytes.empty()) {
        const std::size_t at = pick(bytes.size());
        bytes.erase(bytes.begin() + static_cast<long>(at),
                    bytes.begin() + static_cast<long>(std::min(bytes.size(), at + 1 + pick(32))));
      }
      break;
    default: {
      const std::size_t at = pick(bytes.size() + 1);
      Bytes more(1 + pick(32));
      for (auto& b : more) b = static_cast<std::uint8_t>(rng.next_u64());
      bytes.insert(bytes.begin() + static_cast<long>(at), more.begin(), more.end());
    }
  }
}

// Mutations that know the format; each returns a whole file with a valid checksum unless it
// changes the frame itself.
Bytes structured(Rng& rng, std::vector<Section> sections, const std::string& kind) {
  const auto pick = [&](std::size_t n) { return n ? rng.next_u64() % n : 0; };
  const std::size_t i = pick(sections.size());
  if (kind == "size field" || kind == "name length") {
    Bytes payload = testing::payload_of(sections);
    const Fields f = fields_of(sections)[i];
    if (kind == "size field")
      poke<std::uint64_t>(payload, f.size_at, interesting_size(rng, sections[i].bytes.size()));
    else
      poke<std::uint32_t>(
          payload, f.name_length_at,
          static_cast<std::uint32_t>(interesting_size(rng, sections[i].name.size())));
    return testing::file_of(payload);
  }
  if (kind == "drop") sections.erase(sections.begin() + static_cast<long>(i));
  if (kind == "repeat") sections.push_back(sections[i]);
  if (kind == "swap") std::swap(sections[i], sections[pick(sections.size())]);
  if (kind == "rename")
    sections[i].name = rng.next_u64() % 2 ? sections[pick(sections.size())].name
                                          : std::string(pick(5), static_cast<char>('a' + pick(26)));
  if (kind == "resize") sections[i].bytes.resize(pick(2 * sections[i].bytes.size() + 9), 0x5a);
  if (kind == "plant float" || kind == "plant int") {
    Bytes& b = sections[i].bytes;
    if (kind == "plant float" && b.size() >= 4)
      poke<float>(b, 4 * pick(b.size() / 4), interesting_float(rng));
    if (kind == "plant int" && b.size() >= 8)
      poke<std::int64_t>(b, 8 * pick(b.size() / 8), interesting_int(rng));
    if (kind == "plant int" && b.size() >= 4 && b.size() < 8)
      poke<std::int32_t>(b, 0, static_cast<std::int32_t>(interesting_int(rng)));
  }
  Bytes payload = testing::payload_of(sections);
  if (kind == "frame") {
    switch (pick(3)) {
      case 0:
        return testing::file_of(payload, payload.size(),
                                static_cast<std::uint32_t>(rng.next_u64()));
      case 1:
        return testing::file_of(payload, interesting_size(rng, payload.size()));
      default: {
        Bytes file = testing::file_of(payload);
        file[pick(8)] ^= 0x20;  // the magic
        return file;
      }
    }
  }
  return testing::file_of(payload);
}

struct Tally {
  int accepted = 0, refused = 0;
};

TEST(CheckpointFuzz, EveryMutatedFileIsLoadedOrRefusedWithTheBooksError) {
  const std::uint64_t seed = env_or("BOOK_FUZZ_SEED", 19);
  const int iterations = static_cast<int>(env_or("BOOK_FUZZ_ITERATIONS", kIterations));
  const std::string original = ::testing::TempDir() + "/ch04_fuzz_original.ckpt";
  const std::string path = ::testing::TempDir() + "/ch04_fuzz.ckpt";
  {
    Trainer writer(tiny_options());
    writer.step();
    writer.step();
    writer.save(original);
  }
  const Bytes good_file = testing::read_bytes(original);
  const std::vector<Section> good = testing::sections_of(original);
  const std::vector<std::string> kinds = {"raw",        "raw, new checksum",
                                          "size field", "name length",
                                          "drop",       "repeat",
                                          "swap",       "rename",
                                          "resize",     "plant float",
                                          "plant int",  "frame"};
  Rng rng(seed);
  Trainer trainer(tiny_options());
  std::map<std::string, Tally> tally;
  const auto start = std::chrono::steady_clock::now();
  int done = 0;
  for (; done < iterations && std::chrono::steady_clock::now() - start < kBudget; ++done) {
    const std::string& kind = kinds[rng.next_u64() % kinds.size()];
    Bytes file;
    if (kind == "raw") {
      file = good_file;
      damage(rng, file);
    } else if (kind == "raw, new checksum") {
      Bytes payload = testing::payload_of(good);
      damage(rng, payload);
      file = testing::file_of(payload);
    } else {
      file = structured(rng, good, kind);
    }
    testing::write_bytes(path, file);
    const std::string context = "seed " + std::to_string(seed) + ", file " + std::to_string(done) +
                                " (" + kind + ", " + std::to_string(file.size()) + " bytes)";
    const std::vector<float> before(trainer.model().params().begin(),
                                    trainer.model().params().end());
    const std::int64_t steps_before = trainer.steps_done();
    try {
      CheckpointReader reader(path);  // the reader alone, then the whole load
      trainer.load(path);
      ++tally[kind].accepted;
      try {
        trainer.step();
      } catch (const Error&) {  // e.g. weights so large the loss is not finite: refused, fine
      }
    } catch (const Error& e) {
      ++tally[kind].refused;
      const std::string message = e.what();
      EXPECT_NE(message.find(path), std::string::npos)
          << context << ": the refusal does not name the file: " << message;
      EXPECT_EQ(trainer.steps_done(), steps_before) << context << ": " << message;
      EXPECT_EQ(std::memcmp(before.data(), trainer.model().params().data(),
                            before.size() * sizeof(float)),
                0)  // bit for bit: an earlier file may have left NaN, which == never matches
          << context << ": a refused load changed the weights: " << message;
    } catch (const std::exception& e) {
      ADD_FAILURE() << context << ": threw a " << typeid(e).name()
                    << " (not a book::Error): " << e.what();
    }
    if (HasFailure()) break;
  }
  std::filesystem::remove(path);
  std::filesystem::remove(original);
  std::cout << "checkpoint fuzz: seed " << seed << ", " << done << " of " << iterations
            << " files in "
            << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()
            << " s\n";
  int refused = 0;
  for (const auto& [kind, t] : tally) {
    std::cout << "  " << kind << ": " << t.refused << " refused, " << t.accepted << " accepted\n";
    refused += t.refused;
  }
  // A fuzzer that never reaches the checks proves nothing: most mutated files must be refused,
  // and every kind of mutation must have run.
  EXPECT_EQ(tally.size(), kinds.size()) << "some kinds of mutation never ran";
  EXPECT_GT(refused, done / 2);
}

}  // namespace
}  // namespace book::train
