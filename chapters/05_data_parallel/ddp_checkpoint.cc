// Checkpoints of a data-parallel run: the replicas are equal, so rank 0 writes one file (chapter
// 4's format and section names, so chapter 4's Trainer can load it) and every rank reads it.
#include <cstring>

#include "chapters/04_training_baseline/checkpoint.h"
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
  step_ = in.read_value<std::int64_t>("step");
  adam_.set_step(in.read_value<std::int64_t>("adam_step"));
  in.read_array<float>("weights", master());
  in.read_array<float>("adam_m", adam_.m());
  in.read_array<float>("adam_v", adam_.v());
  std::uint64_t state[4];
  in.read_array<std::uint64_t>("data_rng", std::span<std::uint64_t>(state, 4));
  data_rng_.set_state(std::span<const std::uint64_t, 4>(state, 4));
  scaler_.restore(in.read_value<float>("loss_scale"),
                  in.read_value<std::int32_t>("loss_scale_clean_steps"));
  if (mixed()) refresh_low_weights();
  verify_replicas();  // every rank must have read the same file
}

}  // namespace book::ddp
