// Sharded checkpoints of a ZeRO run: each rank writes its pieces under a new generation's name,
// rank 0 commits a manifest with the shards' checksums by one atomic rename; a run on any N and
// stage (ZeRO-3 too) reads them back through reshard (the exercise).
#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <regex>

#include "chapters/04_training_baseline/checkpoint.h"
#include "chapters/04_training_baseline/checkpoint_checks.h"
#include "chapters/04_training_baseline/mixed_precision.h"
#include "chapters/06_zero/reshard.h"
#include "chapters/06_zero/zero3_trainer.h"
#include "chapters/06_zero/zero_trainer.h"
#include "common/check.h"

namespace book::zero {
namespace {

namespace fs = std::filesystem;

std::int32_t precision_code(DType precision) {  // chapter 4's codes: 0 f32, 1 bf16, 2 f16
  return precision == DType::kF32 ? 0 : precision == DType::kBF16 ? 1 : 2;
}

std::string shard_path(const std::string& dir, int rank, std::int64_t generation) {
  return dir + "/shard-" + std::to_string(rank) + ".g" + std::to_string(generation) + ".ckpt";
}

// The generation a shard file (or its temporary) belongs to, or 0 for any other name.
std::int64_t generation_of(const std::string& name) {
  static const std::regex pattern(R"(shard-\d+\.g(\d+)\.ckpt(\.tmp)?)");
  std::smatch m;
  return std::regex_match(name, m, pattern) ? std::stoll(m[1].str()) : 0;
}

std::uint64_t file_checksum(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  BOOK_CHECK(in, "cannot read " << path);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                                std::istreambuf_iterator<char>());
  return train::fnv1a64({reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()});
}

// One shard's contents, kept alive while reshard reads them.
struct ShardData {
  std::vector<std::uint64_t> pieces;  // begin, end, begin, end, ...
  std::vector<float> master, m, v;
};

std::atomic<int> crash_point{static_cast<int>(SaveCrashPoint::kNone)};

void crash_if_at(SaveCrashPoint point) {
  if (crash_point.load() == static_cast<int>(point)) std::_Exit(kSaveCrashExitCode);
}

// One part of a save that each rank (or rank 0) does, run so that a failure is caught and shared:
// every rank all-gathers (succeeded, value) from every rank, so no rank waits for one that threw.
// Returns the values; throws book::Error on every rank, naming the ranks that failed (and, on a
// failing rank, its own reason), after `undo` has run on rank 0.
struct Outcome {
  bool ok = true;
  double value = 0;  // a number the part produced (a checksum's bits, a generation)
  std::string error;
};

std::vector<double> share(coll::Communicator& comm, const Outcome& mine, const std::string& what,
                          const std::function<void()>& undo) {
  const double part[2] = {mine.ok ? 1.0 : 0.0, mine.value};
  std::vector<double> all(2 * static_cast<std::size_t>(comm.size()));
  comm.all_gather(std::span<const double>(part, 2), std::span<double>(all));
  std::string failed;
  std::vector<double> values;
  for (int r = 0; r < comm.size(); ++r) {
    if (all[2 * r] == 0) failed += (failed.empty() ? "" : ", ") + std::to_string(r);
    values.push_back(all[2 * r + 1]);
  }
  if (failed.empty()) return values;
  if (comm.rank() == 0 && undo) undo();
  BOOK_CHECK(false, what << " failed on rank " << failed
                         << (mine.ok ? "" : " (here: " + mine.error + ")")
                         << "; the checkpoint committed before it is untouched");
  return values;
}

template <typename Fn>
Outcome attempt(Fn&& fn) {
  Outcome out;
  try {
    out.value = fn();
  } catch (const std::exception& e) {  // book::Error, and the filesystem's own
    out.ok = false;
    out.error = e.what();
  }
  return out;
}

}  // namespace

void crash_sharded_save_at(SaveCrashPoint point) { crash_point.store(static_cast<int>(point)); }

void verify_sharded_checkpoint(const std::string& dir) {
  const train::CheckpointReader manifest(dir + "/manifest.ckpt");
  const auto generation = manifest.read_value<std::int64_t>("generation");
  const auto shards = manifest.read_value<std::int32_t>("shards");
  BOOK_CHECK(shards >= 1 && manifest.get("shard_checksums").size() ==
                                static_cast<std::size_t>(shards) * sizeof(std::uint64_t),
             "sharded checkpoint " << dir << ": the manifest's shard count and checksums disagree");
  std::vector<std::uint64_t> checksums(static_cast<std::size_t>(shards));
  manifest.read_array<std::uint64_t>("shard_checksums", std::span<std::uint64_t>(checksums));
  for (int r = 0; r < shards; ++r) {
    const std::string path = shard_path(dir, r, generation);
    BOOK_CHECK(fs::exists(path), "sharded checkpoint " << dir << ": shard " << r << " of "
                                                       << shards << " (" << path << ") is missing");
    BOOK_CHECK(file_checksum(path) == checksums[r],
               "sharded checkpoint " << dir << ": shard " << r << " (" << path
                                     << ") is corrupted: its checksum differs from the manifest's");
    const train::CheckpointReader shard(path);
  }
}

std::string committed_shard_path(const std::string& dir, int rank) {
  const train::CheckpointReader manifest(dir + "/manifest.ckpt");
  return shard_path(dir, rank, manifest.read_value<std::int64_t>("generation"));
}

//! [zero_save]
void save_sharded(const std::string& dir, const ShardedState& s) {
  coll::Communicator& comm_ = *s.comm;
  const ShardPlan& plan_ = *s.plan;
  std::vector<train::AdamWState>& adam_ = *s.adam;
  const std::string what = "sharded save into " + (dir.empty() ? "''" : dir);
  // 1. Rank 0 prepares the folder and picks the next generation: one above any shard file there,
  //    committed or left by a killed save, so the new files never overwrite the committed ones.
  //    (Rank 0 alone looks: the others learn the generation from it.)
  const Outcome prepared = attempt([&]() -> double {
    if (comm_.rank() != 0) return 0;
    BOOK_CHECK(!dir.empty(), "the checkpoint folder is empty: name a folder");
    BOOK_CHECK(!fs::exists(dir) || fs::is_directory(dir),
               dir << " is a file, not a folder: name a folder for the shards and the manifest");
    fs::create_directories(dir);
    std::int64_t last = 0;  // of whole shard files; a killed save's temporary is overwritten
    for (const auto& entry : fs::directory_iterator(dir))
      if (entry.path().extension() != ".tmp")
        last = std::max(last, generation_of(entry.path().filename().string()));
    return static_cast<double>(last + 1);
  });
  const auto generation =
      static_cast<std::int64_t>(share(comm_, prepared, what + ": preparing the folder", {})[0]);
  crash_if_at(SaveCrashPoint::kAfterPrepare);
  const auto remove_generation = [&] {  // rank 0, after a failure: the new files, best effort
    std::error_code ignored;
    for (const auto& entry : fs::directory_iterator(dir, ignored))
      if (generation_of(entry.path().filename().string()) == generation)
        fs::remove_all(entry.path(), ignored);
  };

  // 2. Every writing rank writes its shard under the new generation's name.
  const bool writer = !s.replicated || comm_.rank() == 0;
  const int shards = s.replicated ? 1 : comm_.size();
  const Outcome written = attempt([&]() -> double {
    if (!writer) return 0;
    ShardData data;
    for (std::size_t i = 0; i < plan_.pieces.size(); ++i) {
      const ddp::FlatRange& p = plan_.pieces[i];
      data.pieces.insert(data.pieces.end(), {p.begin, p.end});
      const std::span<float> master = s.master[i];
      data.master.insert(data.master.end(), master.begin(), master.end());
      data.m.insert(data.m.end(), adam_[i].m().begin(), adam_[i].m().end());
      data.v.insert(data.v.end(), adam_[i].v().begin(), adam_[i].v().end());
    }
    train::CheckpointWriter out;
    out.add_array<std::uint64_t>("pieces", data.pieces);
    out.add_array<float>("master", data.master);
    out.add_array<float>("adam_m", data.m);
    out.add_array<float>("adam_v", data.v);
    const std::string path = shard_path(dir, comm_.rank(), generation);
    out.write_atomically(path);
    return std::bit_cast<double>(file_checksum(path));  // FNV-1a's bits (all_gather copies bytes)
  });
  const std::vector<double> checksums_bits =
      share(comm_, written, what + ": writing the shards", remove_generation);
  crash_if_at(SaveCrashPoint::kAfterShards);

  // 3. The commit: rank 0's manifest, renamed into place by write_atomically. Before the rename
  //    the folder loads as the previous checkpoint; after it, as this one.
  const Outcome committed = attempt([&]() -> double {
    if (comm_.rank() != 0) return 0;
    std::vector<std::uint64_t> checksums;
    for (int r = 0; r < shards; ++r)
      checksums.push_back(std::bit_cast<std::uint64_t>(checksums_bits[r]));
    train::CheckpointWriter out;
    out.add_value("config", s.options->train.model);
    out.add_value("precision", precision_code(s.options->train.precision));
    out.add_value("parameters", static_cast<std::uint64_t>(plan_.total));
    out.add_value("generation", generation);
    out.add_value("shards", static_cast<std::int32_t>(shards));
    out.add_array<std::uint64_t>("shard_checksums", checksums);
    out.add_value("step", *s.step);
    out.add_value("adam_step", adam_.empty() ? std::int64_t{0} : adam_.front().step());
    out.add_array<std::uint64_t>("data_rng", s.data_rng->state());
    out.add_value("loss_scale", s.scaler->scale());
    out.add_value("loss_scale_clean_steps", static_cast<std::int32_t>(s.scaler->clean_steps()));
    out.write_atomically(dir + "/manifest.ckpt");
    return 0;
  });
  share(comm_, committed, what + ": committing the manifest", remove_generation);
  crash_if_at(SaveCrashPoint::kAfterCommit);

  // 4. Only now the older generations go (and what killed saves left).
  if (comm_.rank() == 0) {
    std::error_code ignored;
    for (const auto& entry : fs::directory_iterator(dir, ignored)) {
      const std::int64_t g = generation_of(entry.path().filename().string());
      if (g != 0 && g != generation) fs::remove_all(entry.path(), ignored);
    }
  }
}
//! [zero_save]

void load_sharded(const std::string& dir, const ShardedState& s) {
  const ShardPlan& plan_ = *s.plan;
  std::vector<train::AdamWState>& adam_ = *s.adam;
  const std::string manifest_path = dir + "/manifest.ckpt";
  BOOK_CHECK(std::filesystem::exists(manifest_path),
             "sharded checkpoint " << dir
                                   << ": no manifest.ckpt (an unfinished save, or not a "
                                      "checkpoint folder)");
  const train::CheckpointReader manifest(manifest_path);
  const auto config = manifest.read_value<train::Config>("config");
  BOOK_CHECK(std::memcmp(&config, &s.options->train.model, sizeof(train::Config)) == 0,
             "sharded checkpoint " << dir << " is of another model (" << config.n_layer
                                   << " layers, d_model " << config.d_model << "); this run has "
                                   << s.options->train.model.n_layer << " layers, d_model "
                                   << s.options->train.model.d_model);
  const auto precision = manifest.read_value<std::int32_t>("precision");
  BOOK_CHECK(precision == precision_code(s.options->train.precision),
             "sharded checkpoint " << dir << " was written in precision code " << precision
                                   << " (0 f32, 1 bf16, 2 f16); this run is "
                                   << dtype_name(s.options->train.precision));
  BOOK_CHECK(manifest.read_value<std::uint64_t>("parameters") == plan_.total,
             "sharded checkpoint " << dir << " holds another number of parameters");
  // Everything is read and checked into temporaries first (chapter 4's checks, and the shards'
  // pieces against the plan); the live state changes only after all of it has passed, so a
  // refused checkpoint leaves the run exactly as it was.
  const std::string what = "sharded checkpoint " + dir;
  const auto shards = manifest.read_value<std::int32_t>("shards");
  const std::size_t checksum_bytes = manifest.get("shard_checksums").size();
  BOOK_CHECK(shards >= 1 && checksum_bytes == static_cast<std::size_t>(shards) * 8,
             what << ": the manifest names " << shards << " shards and holds " << checksum_bytes / 8
                  << " checksums; it was not written by save_sharded, save again");
  const auto generation = manifest.read_value<std::int64_t>("generation");
  BOOK_CHECK(generation >= 1, what << ": the manifest names generation " << generation
                                   << "; it was not written by save_sharded, save again");
  std::vector<std::uint64_t> checksums(static_cast<std::size_t>(shards));
  manifest.read_array<std::uint64_t>("shard_checksums", std::span<std::uint64_t>(checksums));
  std::vector<ShardData> data(checksums.size());
  std::vector<SavedPiece> saved;
  for (int r = 0; r < shards; ++r) {
    const std::string path = shard_path(dir, r, generation);
    BOOK_CHECK(std::filesystem::exists(path), "sharded checkpoint " << dir << ": shard " << r
                                                                    << " of " << shards << " ("
                                                                    << path << ") is missing");
    BOOK_CHECK(file_checksum(path) == checksums[r],
               "sharded checkpoint " << dir << ": shard " << r << " (" << path
                                     << ") is corrupted: its checksum differs from the manifest's");
    const train::CheckpointReader in(path);
    ShardData& d = data[r];
    const std::size_t piece_bytes = in.get("pieces").size();
    BOOK_CHECK(piece_bytes % 16 == 0, what << ": shard " << r << "'s 'pieces' section holds "
                                           << piece_bytes << " bytes, not pairs of 8-byte offsets");
    d.pieces.resize(piece_bytes / sizeof(std::uint64_t));
    in.read_array<std::uint64_t>("pieces", std::span<std::uint64_t>(d.pieces));
    // Each piece within the plan and the total no more than the master section holds: a damaged
    // range must not size a buffer (end < begin would wrap to 2^64).
    const std::size_t stored = in.get("master").size() / sizeof(float);
    std::size_t owned = 0;
    for (std::size_t i = 0; i + 1 < d.pieces.size(); i += 2) {
      BOOK_CHECK(d.pieces[i] <= d.pieces[i + 1] && d.pieces[i + 1] <= plan_.total &&
                     d.pieces[i + 1] - d.pieces[i] <= stored - owned,
                 what << ": shard " << r << "'s piece [" << d.pieces[i] << ", " << d.pieces[i + 1]
                      << ") is not a range of the " << plan_.total << " parameters that its "
                      << stored
                      << " stored elements hold; the shard was not written by save_sharded");
      owned += d.pieces[i + 1] - d.pieces[i];
    }
    d.master.resize(owned), d.m.resize(owned), d.v.resize(owned);
    in.read_array<float>("master", std::span<float>(d.master));
    in.read_array<float>("adam_m", std::span<float>(d.m));
    in.read_array<float>("adam_v", std::span<float>(d.v));
    const std::string shard = what + ", shard " + std::to_string(r);
    train::check_finite_section(shard, "master", d.master, false);
    train::check_finite_section(shard, "adam_m", d.m, false);
    train::check_finite_section(shard, "adam_v", d.v, true);
    std::size_t at = 0;
    for (std::size_t i = 0; i + 1 < d.pieces.size(); i += 2) {
      const std::size_t len = d.pieces[i + 1] - d.pieces[i];
      saved.push_back({{d.pieces[i], d.pieces[i + 1]},
                       std::span<const float>(d.master).subspan(at, len),
                       std::span<const float>(d.m).subspan(at, len),
                       std::span<const float>(d.v).subspan(at, len)});
      at += len;
    }
  }
  const auto step = manifest.read_value<std::int64_t>("step");
  const auto adam_step = manifest.read_value<std::int64_t>("adam_step");
  train::check_checkpoint_steps(what, step, adam_step);
  std::uint64_t state[4];
  manifest.read_array<std::uint64_t>("data_rng", std::span<std::uint64_t>(state, 4));
  train::check_data_rng_state(what, std::span<const std::uint64_t, 4>(state, 4));
  const train::LossScaler scaler =
      train::restored_scaler(what, *s.scaler, manifest.read_value<float>("loss_scale"),
                             manifest.read_value<std::int32_t>("loss_scale_clean_steps"));
  // This rank's new pieces, resharded into temporaries (reshard refuses missing elements).
  std::vector<std::vector<float>> new_master, new_m, new_v;
  std::vector<std::span<float>> master, m, v;
  for (const ddp::FlatRange& piece : plan_.pieces) {
    new_master.emplace_back(piece.size()), new_m.emplace_back(piece.size());
    new_v.emplace_back(piece.size());
    master.push_back(new_master.back()), m.push_back(new_m.back()), v.push_back(new_v.back());
  }
  reshard(saved, {plan_.pieces, master, m, v});

  // Commit: nothing below can fail.
  for (std::size_t i = 0; i < plan_.pieces.size(); ++i) {
    std::copy(new_master[i].begin(), new_master[i].end(), s.master[i].begin());
    std::copy(new_m[i].begin(), new_m[i].end(), adam_[i].m().begin());
    std::copy(new_v[i].begin(), new_v[i].end(), adam_[i].v().begin());
    adam_[i].set_step(adam_step);
  }
  *s.step = step;
  s.data_rng->set_state(std::span<const std::uint64_t, 4>(state, 4));
  *s.scaler = scaler;
}

void ZeroTrainer::save(const std::string& dir) {
  save_sharded(dir, {&comm_, &options_, &plan_, master_pieces(), &adam_, &step_, &data_rng_,
                     &scaler_, options_.stage == Stage::kDdp});
}

void ZeroTrainer::load(const std::string& dir) {
  load_sharded(dir, {&comm_, &options_, &plan_, master_pieces(), &adam_, &step_, &data_rng_,
                     &scaler_, options_.stage == Stage::kDdp});
  publish_weights();  // the weights the next forward reads, from everyone's new pieces
  counts_ = {};
}

std::vector<std::span<float>> ZeroTrainer::master_pieces() {
  std::vector<std::span<float>> pieces;
  for (std::size_t i = 0; i < plan_.pieces.size(); ++i) pieces.push_back(master_piece(i));
  return pieces;
}

void Zero3Trainer::save(const std::string& dir) {
  save_sharded(dir, {&comm_, &options_, &plan_, master_pieces(), &adam_, &step_, &data_rng_,
                     &scaler_, false});
}

void Zero3Trainer::load(const std::string& dir) {
  load_sharded(dir, {&comm_, &options_, &plan_, master_pieces(), &adam_, &step_, &data_rng_,
                     &scaler_, false});
  if (mixed()) train::encode(options_.train.precision, master_.span(), shard16_.span());
  counts_ = {};  // nothing to gather now: the next forward gathers from the new shards
}

std::vector<std::span<float>> Zero3Trainer::master_pieces() {
  std::vector<std::span<float>> pieces;
  for (std::size_t u = 0; u < plan_.pieces.size(); ++u) pieces.push_back(master_piece(u));
  return pieces;
}

}  // namespace book::zero
