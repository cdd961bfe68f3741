// The supervisor's folder of step-numbered checkpoints (checkpoint_folder.h).
#include "chapters/15_production_training/checkpoint_folder.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "chapters/04_training_baseline/checkpoint.h"
#include "chapters/06_zero/zero_trainer.h"
#include "common/check.h"

namespace book::prod {
namespace fs = std::filesystem;
namespace {

// The step of a file named step-NNNNNNNN.ckpt, or -1 for any other name.
std::int64_t step_of(const fs::path& file) {
  const std::string name = file.filename().string();
  if (name.size() != 18 || name.rfind("step-", 0) != 0 || name.substr(13) != ".ckpt") return -1;
  const std::string digits = name.substr(5, 8);
  if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return -1;
  return std::stoll(digits);
}

std::vector<std::int64_t> steps_on_disk(const std::string& dir) {
  std::vector<std::int64_t> steps;
  for (const auto& entry : fs::directory_iterator(dir))
    if (const std::int64_t step = step_of(entry.path()); step >= 0) steps.push_back(step);
  std::sort(steps.begin(), steps.end());
  return steps;
}

}  // namespace

std::string checkpoint_file(const std::string& dir, std::int64_t step) {
  char name[32];
  std::snprintf(name, sizeof name, "step-%08lld.ckpt", static_cast<long long>(step));
  return (fs::path(dir) / name).string();
}

void prepare_checkpoint_dir(const std::string& dir) {
  BOOK_CHECK(!dir.empty(), "no checkpoint directory given; name a folder the run can write");
  std::error_code error;
  fs::create_directories(dir, error);
  BOOK_CHECK(!error && fs::is_directory(dir),
             "checkpoint directory " << dir << " cannot be created ("
                                     << (error ? error.message() : "a file has that name")
                                     << "); give a folder the run can write");
  const fs::path probe = fs::path(dir) / ".write-probe";
  {
    std::ofstream out(probe);
    out << "probe\n";
    out.close();
    BOOK_CHECK(out.good(), "checkpoint directory "
                               << dir << " is not writable (a probe file could not be written); "
                               << "give a folder the run can write, before training starts");
  }
  fs::remove(probe);
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("step-", 0) == 0 && name.find(".ckpt") != std::string::npos)
      fs::remove_all(entry.path());
  }
}

std::vector<CheckpointOnDisk> verify_checkpoints(const std::string& dir) {
  std::vector<CheckpointOnDisk> found;
  for (const std::int64_t step : steps_on_disk(dir)) {
    CheckpointOnDisk c;
    c.step = step;
    try {
      const std::string path = checkpoint_file(dir, step);
      if (fs::is_directory(path)) {  // a sharded (ZeRO) checkpoint: its manifest and every shard
        zero::verify_sharded_checkpoint(path);
      } else {
        const train::CheckpointReader reader(path);
      }
      c.verified = true;
    } catch (const Error&) {
      c.verified = false;  // truncated, corrupted or unreadable: never loaded
    }
    found.push_back(c);
  }
  return found;
}

void set_aside_checkpoint(const std::string& dir, std::int64_t step) {
  const std::string file = checkpoint_file(dir, step);
  fs::rename(file, file + ".corrupt");
}

void prune_checkpoints(const std::string& dir, int keep) {
  const std::vector<std::int64_t> steps = steps_on_disk(dir);
  for (std::size_t i = 0; i + static_cast<std::size_t>(keep) < steps.size(); ++i)
    fs::remove_all(checkpoint_file(dir, steps[i]));
}

RestartPlan plan_restart(const std::string& dir, std::int64_t failed_step,
                         std::vector<std::int64_t>* unverified) {
  const std::vector<CheckpointOnDisk> on_disk = verify_checkpoints(dir);
  const RestartPlan plan = restart_plan(on_disk, failed_step);
  for (const CheckpointOnDisk& c : on_disk)
    if (!c.verified) unverified->push_back(c.step), set_aside_checkpoint(dir, c.step);
  return plan;
}

std::int64_t corrupt_newest_checkpoint(const std::string& dir) {
  const std::vector<std::int64_t> steps = steps_on_disk(dir);
  if (steps.empty()) return 0;
  std::string file = checkpoint_file(dir, steps.back());
  if (fs::is_directory(file)) file = (fs::path(file) / "manifest.ckpt").string();  // sharded
  std::fstream io(file, std::ios::in | std::ios::out | std::ios::binary);
  BOOK_CHECK(io.good(), "cannot open checkpoint " << file << " to corrupt it");
  io.seekg(0, std::ios::end);
  const std::streamoff middle = io.tellg() / 2;
  char byte = 0;
  io.seekg(middle);
  io.read(&byte, 1);
  byte = static_cast<char>(byte ^ 0x5a);
  io.seekp(middle);
  io.write(&byte, 1);
  BOOK_CHECK(io.good(), "cannot corrupt checkpoint " << file);
  return steps.back();
}

}  // namespace book::prod
