// Issue 19's checkpoint defects, each planted in a file with a valid checksum (so the reader's
// later checks are what refuses it): a section size near 2^64 that made the reader loop forever,
// a payload size that wrapped around, a repeated section, a directory, a load that was not all or
// nothing, NaN weights, and a failed save that left path.tmp behind. Scaffolding: both tracks.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "chapters/04_training_baseline/checkpoint.h"
#include "chapters/04_training_baseline/trainer.h"
#include "common/testing/expect_error.h"
#include "tests/04_training_baseline/checkpoint_bytes.h"

namespace book::train {
namespace {

using book::testing::expect_error;
using testing::Bytes;
using testing::file_of;
using testing::payload_of;
using testing::Section;
using testing::sections_of;
using testing::write_bytes;

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

class HostileCheckpoint : public ::testing::Test {
 protected:
  std::string path = ::testing::TempDir() + "/ch04_hostile.ckpt";
  void TearDown() override {
    std::filesystem::remove_all(path);
    std::filesystem::remove_all(path + ".tmp");
  }
  // A checkpoint of a trainer that has taken two steps, as sections.
  std::vector<Section> real_sections() {
    Trainer trainer(tiny_options());
    trainer.step();
    trainer.step();
    trainer.save(path);
    return sections_of(path);
  }
  static Section* find(std::vector<Section>& sections, const std::string& name) {
    for (Section& s : sections)
      if (s.name == name) return &s;
    ADD_FAILURE() << "no section " << name;
    return nullptr;
  }
};

TEST_F(HostileCheckpoint, ASectionSizeNear2To64IsRefusedNotLoopedOn) {
  // One section "w" whose size, added to its offset (13), wraps to 0: the old reader went back to
  // the start of the payload for ever, its index growing without bound.
  Bytes payload;
  testing::append<std::uint32_t>(payload, 1);
  payload.push_back('w');
  testing::append<std::uint64_t>(payload, std::numeric_limits<std::uint64_t>::max() - 12);
  payload.insert(payload.end(), 8, 0x42);
  write_bytes(path, file_of(payload));
  expect_error([&] { CheckpointReader{path}; },
               {"section 'w' claims 18446744073709551603 bytes but only 8 remain"});
  // Near-misses of the same check: one byte too many, and 2^64 - 18 as the issue found it.
  for (const std::uint64_t size : {std::uint64_t{9}, std::uint64_t(-18)}) {
    Bytes p(payload.begin(), payload.begin() + 5);
    testing::append<std::uint64_t>(p, size);
    p.insert(p.end(), 8, 0x42);
    write_bytes(path, file_of(p));
    expect_error([&] { CheckpointReader{path}; }, {"section 'w' claims", "only 8 remain"});
  }
}

TEST_F(HostileCheckpoint, APayloadSizeLargerThanTheFileIsRefused) {
  const Bytes payload = payload_of({{"step", Bytes(8, 0)}});
  for (const std::uint64_t claimed : {std::uint64_t(-1), std::uint64_t(payload.size() + 1)}) {
    write_bytes(path, file_of(payload, claimed));
    expect_error([&] { CheckpointReader{path}; },
                 {"truncated or has trailing bytes", std::to_string(claimed) + "-byte payload",
                  "room for " + std::to_string(payload.size())});
  }
}

TEST_F(HostileCheckpoint, ANameLongerThanThePayloadIsRefused) {
  Bytes payload;
  testing::append<std::uint32_t>(payload, 0xFFFFFFF0u);
  payload.insert(payload.end(), 20, 'n');
  write_bytes(path, file_of(payload));
  expect_error([&] { CheckpointReader{path}; }, {"section name of 4294967280 bytes", "overruns"});
  write_bytes(path, file_of(Bytes{1, 0, 0}));
  expect_error([&] { CheckpointReader{path}; }, {"malformed section header at byte 0"});
}

TEST_F(HostileCheckpoint, ARepeatedSectionIsRefused) {
  std::vector<Section> sections = real_sections();
  Section again = *find(sections, "step");
  again.bytes[0] ^= 1;  // the old reader used the first and never looked at this one
  sections.push_back(again);
  write_bytes(path, file_of(payload_of(sections)));
  expect_error([&] { CheckpointReader{path}; }, {"section 'step' appears twice"});
}

TEST_F(HostileCheckpoint, ADirectoryIsRefusedWithTheBooksError) {
  std::filesystem::create_directories(path);
  expect_error([&] { CheckpointReader{path}; }, {"cannot read checkpoint", "it is a directory"});
  Trainer trainer(tiny_options());
  expect_error([&] { trainer.load(path); }, {"it is a directory"});
  expect_error([&] { trainer.save(path); },
               {"cannot write checkpoint " + path + ": it is a directory"});
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp")) << "a refused save left its temporary";
}

// Issue 36: a named pipe used to block the reader forever in open(), before the regular-file
// check could run. Under the old code this test hangs until Bazel's timeout.
TEST_F(HostileCheckpoint, ANamedPipeIsRefusedNotWaitedOn) {
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0) << "cannot make a FIFO at " << path;
  expect_error([&] { CheckpointReader{path}; }, {"cannot read checkpoint", "not a regular file"});
  Trainer trainer(tiny_options());
  expect_error([&] { trainer.load(path); }, {"not a regular file"});
}

// A write that fails half-way (here the file-size limit, as a full disk would) removes path.tmp.
TEST_F(HostileCheckpoint, AFailedSaveLeavesNoTemporaryFile) {
  Trainer trainer(tiny_options());
  rlimit old{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old), 0);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);  // write() then fails with EFBIG
  rlimit small = old;
  small.rlim_cur = 1000;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  expect_error([&] { trainer.save(path); }, {"writing checkpoint " + path + ".tmp failed"});
  ::setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp")) << "a failed save left its temporary";
  EXPECT_FALSE(std::filesystem::exists(path)) << "a failed save must not create the file";
}

// Everything a trainer's state is made of, to compare before and after a refused load.
struct Snapshot {
  std::int64_t step;
  std::vector<float> weights;
  bool operator==(const Snapshot&) const = default;
};

Snapshot snapshot(Trainer& t) {
  auto& params = t.model().params();
  return {t.steps_done(), std::vector<float>(params.begin(), params.end())};
}

TEST_F(HostileCheckpoint, ARefusedLoadLeavesTheTrainerExactlyAsItWas) {
  const std::vector<Section> good = real_sections();
  // Each file is valid but for one section; the old load had already overwritten the step
  // counter and weights when it reached the bad one.
  std::vector<std::pair<std::string, std::vector<Section>>> cases;
  {
    std::vector<Section> s = good;
    std::erase_if(s, [](const Section& x) { return x.name == "adam_v"; });
    cases.push_back({"has no section 'adam_v'", s});
  }
  {
    std::vector<Section> s = good;
    find(s, "loss_scale")->bytes = testing::as_bytes(std::vector<float>{-1.0f});
    cases.push_back({"LossScaler::restore: state (scale -1", s});
  }
  {
    std::vector<Section> s = good;
    find(s, "adam_step")->bytes = testing::as_bytes(std::vector<std::int64_t>{-5});
    cases.push_back({"Adam's step -5 are not counts of a run", s});
  }
  {
    std::vector<Section> s = good;
    find(s, "data_rng")->bytes = Bytes(32, 0);
    cases.push_back({"the data stream's state is all zeros", s});
  }
  Trainer trainer(tiny_options()), twin(tiny_options());
  for (int i = 0; i < 3; ++i) trainer.step(), twin.step();
  for (const auto& [message, sections] : cases) {
    SCOPED_TRACE(message);
    write_bytes(path, file_of(payload_of(sections)));
    const Snapshot before = snapshot(trainer);
    expect_error([&] { trainer.load(path); }, message);
    EXPECT_TRUE(snapshot(trainer) == before) << "the refused load changed the trainer";
  }
  // And the run goes on exactly as its twin that never saw a bad file (m, v, the data stream and
  // the loss scale included).
  const StepResult a = trainer.step(), b = twin.step();
  EXPECT_EQ(a.step, b.step);
  EXPECT_EQ(a.loss, b.loss);
  EXPECT_EQ(a.grad_norm, b.grad_norm);
  EXPECT_TRUE(snapshot(trainer) == snapshot(twin));
}

TEST_F(HostileCheckpoint, NonFiniteWeightsAndMomentsAreRefused) {
  const std::vector<Section> good = real_sections();
  const float nan = std::numeric_limits<float>::quiet_NaN(),
              inf = std::numeric_limits<float>::infinity();
  const std::vector<std::tuple<std::string, float, std::string>> plants = {
      {"weights", nan, "section 'weights' holds nan at element 5"},
      {"weights", -inf, "section 'weights' holds -inf at element 5"},
      {"adam_m", inf, "section 'adam_m' holds inf at element 5"},
      {"adam_v", -1.0f, "section 'adam_v' holds -1 at element 5 (a finite value >= 0 expected)"},
  };
  for (const auto& [name, value, message] : plants) {
    SCOPED_TRACE(message);
    std::vector<Section> s = good;
    auto values = testing::as_array<float>(find(s, name)->bytes);
    values[5] = value;
    find(s, name)->bytes = testing::as_bytes(values);
    write_bytes(path, file_of(payload_of(s)));
    Trainer trainer(tiny_options());
    const Snapshot before = snapshot(trainer);
    expect_error([&] { trainer.load(path); }, {message, "resume from an earlier checkpoint"});
    EXPECT_TRUE(snapshot(trainer) == before);
  }
  // The untouched sections still load.
  write_bytes(path, file_of(payload_of(good)));
  Trainer trainer(tiny_options());
  trainer.load(path);
  EXPECT_EQ(trainer.steps_done(), 2);
}

}  // namespace
}  // namespace book::train
