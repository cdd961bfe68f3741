// Sharded checkpoints of a ZeRO run: each rank writes its pieces, rank 0 a manifest with the
// shards' checksums; a run on any N and stage (ZeRO-3 too) reads them back through reshard (the
// exercise).
#include <algorithm>
#include <bit>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "chapters/04_training_baseline/checkpoint.h"
#include "chapters/04_training_baseline/checkpoint_checks.h"
#include "chapters/04_training_baseline/mixed_precision.h"
#include "chapters/06_zero/reshard.h"
#include "chapters/06_zero/zero3_trainer.h"
#include "chapters/06_zero/zero_trainer.h"
#include "common/check.h"

namespace book::zero {
namespace {

std::int32_t precision_code(DType precision) {  // chapter 4's codes: 0 f32, 1 bf16, 2 f16
  return precision == DType::kF32 ? 0 : precision == DType::kBF16 ? 1 : 2;
}

std::string shard_path(const std::string& dir, int rank) {
  return dir + "/shard-" + std::to_string(rank) + ".ckpt";
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

}  // namespace

//! [zero_save]
void save_sharded(const std::string& dir, const ShardedState& s) {
  coll::Communicator& comm_ = *s.comm;
  const ShardPlan& plan_ = *s.plan;
  std::vector<train::AdamWState>& adam_ = *s.adam;
  if (comm_.rank() == 0) std::filesystem::create_directories(dir);
  comm_.barrier();
  const bool writer = !s.replicated || comm_.rank() == 0;
  const int shards = s.replicated ? 1 : comm_.size();
  double checksum = 0;  // the file's FNV-1a, as the bits of a double (all_gather copies bytes)
  if (writer) {
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
    out.write_atomically(shard_path(dir, comm_.rank()));
    checksum = std::bit_cast<double>(file_checksum(shard_path(dir, comm_.rank())));
  }
  std::vector<double> all(static_cast<std::size_t>(comm_.size()));
  comm_.all_gather(std::span<const double>(&checksum, 1), std::span<double>(all));
  if (comm_.rank() == 0) {  // written last: a manifest means every shard it names is complete
    std::vector<std::uint64_t> checksums;
    for (int r = 0; r < shards; ++r) checksums.push_back(std::bit_cast<std::uint64_t>(all[r]));
    train::CheckpointWriter out;
    out.add_value("config", s.options->train.model);
    out.add_value("precision", precision_code(s.options->train.precision));
    out.add_value("parameters", static_cast<std::uint64_t>(plan_.total));
    out.add_value("shards", static_cast<std::int32_t>(shards));
    out.add_array<std::uint64_t>("shard_checksums", checksums);
    out.add_value("step", *s.step);
    out.add_value("adam_step", adam_.empty() ? std::int64_t{0} : adam_.front().step());
    out.add_array<std::uint64_t>("data_rng", s.data_rng->state());
    out.add_value("loss_scale", s.scaler->scale());
    out.add_value("loss_scale_clean_steps", static_cast<std::int32_t>(s.scaler->clean_steps()));
    out.write_atomically(dir + "/manifest.ckpt");
  }
  comm_.barrier();  // nobody reads it before it exists
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
  std::vector<std::uint64_t> checksums(static_cast<std::size_t>(shards));
  manifest.read_array<std::uint64_t>("shard_checksums", std::span<std::uint64_t>(checksums));
  std::vector<ShardData> data(checksums.size());
  std::vector<SavedPiece> saved;
  for (int r = 0; r < shards; ++r) {
    const std::string path = shard_path(dir, r);
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
