// Checkpoints of a data-parallel run: the replicas are equal, so rank 0 writes one file (chapter
// 4's format and section names, so chapter 4's Trainer can load it) and every rank reads it.
#include <algorithm>
#include <cstring>
#include <vector>

#include "chapters/04_training_baseline/checkpoint.h"
#include "chapters/04_training_baseline/checkpoint_checks.h"
#include "chapters/05_data_parallel/ddp_trainer.h"
#include "common/check.h"

namespace book::ddp {
namespace {

// Chapter 4's checkpoint code for a precision (format version 1): 0 f32, 1 bf16, 2 f16.
std::int32_t precision_code(DType precision) {
  return precision == DType::kF32 ? 0 : precision == DType::kBF16 ? 1 : 2;
}

}  // namespace

//! [ddp_save]
void DdpTrainer::save(const std::string& path) {
  if (comm_.rank() == 0) {  // one writer; the others hold the same bits
    train::CheckpointWriter out;
    out.add_value("config", options_.train.model);
    out.add_value("precision", precision_code(options_.train.precision));
    out.add_value("step", step_);
    out.add_value("adam_step", adam_.step());
    out.add_array<float>("weights", master_weights());
    out.add_array<float>("adam_m", adam_.m());
    out.add_array<float>("adam_v", adam_.v());
    out.add_array<std::uint64_t>("data_rng", data_rng_.state());
    out.add_value("loss_scale", scaler_.scale());
    out.add_value("loss_scale_clean_steps", static_cast<std::int32_t>(scaler_.clean_steps()));
    out.write_atomically(path);  // a temporary file, fsync, rename: never half a checkpoint
  }
  comm_.barrier();  // nobody reads it, or fails over to it, before it exists
}
//! [ddp_save]

void DdpTrainer::load(const std::string& path) {
  const train::CheckpointReader in(path);
  const auto config = in.read_value<train::Config>("config");
  BOOK_CHECK(std::memcmp(&config, &options_.train.model, sizeof(train::Config)) == 0,
             "checkpoint " << path << " is of another model (" << config.n_layer
                           << " layers, d_model " << config.d_model << "); this run has "
                           << options_.train.model.n_layer << " layers, d_model "
                           << options_.train.model.d_model);
  const auto precision = in.read_value<std::int32_t>("precision");
  BOOK_CHECK(precision == precision_code(options_.train.precision),
             "checkpoint " << path << " was written in precision code " << precision
                           << " (0 f32, 1 bf16, 2 f16); this run is "
                           << dtype_name(options_.train.precision));
  // Everything is read and checked into temporaries first (chapter 4's checks): a refused file
  // leaves the run exactly as it was.
  const std::string what = "checkpoint " + path;
  const auto step = in.read_value<std::int64_t>("step");
  const auto adam_step = in.read_value<std::int64_t>("adam_step");
  train::check_checkpoint_steps(what, step, adam_step);
  auto finite = [&](const std::string& name, std::size_t count, bool non_negative) {
    std::vector<float> values(count);
    in.read_array<float>(name, std::span<float>(values));
    train::check_finite_section(what, name, values, non_negative);
    return values;
  };
  const std::vector<float> weights = finite("weights", master().size(), false);
  const std::vector<float> m = finite("adam_m", adam_.m().size(), false);
  const std::vector<float> v = finite("adam_v", adam_.v().size(), true);
  std::uint64_t state[4];
  in.read_array<std::uint64_t>("data_rng", std::span<std::uint64_t>(state, 4));
  train::check_data_rng_state(what, std::span<const std::uint64_t, 4>(state, 4));
  const train::LossScaler scaler =
      train::restored_scaler(what, scaler_, in.read_value<float>("loss_scale"),
                             in.read_value<std::int32_t>("loss_scale_clean_steps"));

  // Commit: nothing below can fail.
  step_ = step;
  adam_.set_step(adam_step);
  std::copy(weights.begin(), weights.end(), master().begin());
  std::copy(m.begin(), m.end(), adam_.m().begin());
  std::copy(v.begin(), v.end(), adam_.v().begin());
  data_rng_.set_state(std::span<const std::uint64_t, 4>(state, 4));
  scaler_ = scaler;
  if (mixed()) refresh_low_weights();
  verify_replicas();  // every rank must have read the same file
}

}  // namespace book::ddp
