/// @file
/// What the supervisor asks of one rank's trainer, whichever it is: chapter 5's DdpTrainer (every
/// rank holds everything; rank 0 writes one checkpoint file) or chapter 6's ZeRO-1 trainer (each
/// rank holds its shard of the optimizer state; a checkpoint is a folder of shards that any number
/// of ranks can load, resharding it). The second is what lets a job restart on fewer ranks.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "chapters/03_collectives/communicator.h"
#include "chapters/04_training_baseline/trainer.h"
#include "chapters/05_data_parallel/ddp_options.h"

namespace book::prod {

/// One rank's trainer, as the supervisor drives it. Every call is collective.
class RankTrainer {
 public:
  virtual ~RankTrainer() = default;
  virtual train::StepResult step() = 0;             ///< one optimizer step
  virtual void save(const std::string& path) = 0;   ///< a checkpoint (file or folder)
  virtual void load(const std::string& path) = 0;   ///< resume from one, any rank count
  virtual std::int64_t steps_done() const = 0;      ///< optimizer steps so far
  virtual std::vector<float> master_weights() = 0;  ///< all FP32 weights (collective)
};

/// Positions a step of `options` trains, all ranks together (chapter 4's Trainer::tokens_per_step).
std::int64_t tokens_per_step(const ddp::DdpOptions& options);

/// Chapter 5's DdpTrainer (`zero` false) or chapter 6's ZeRO-1 trainer (`zero` true) on `comm`,
/// for the run `options` describes (ZeRO takes its TrainOptions and bucket size).
std::unique_ptr<RankTrainer> make_rank_trainer(coll::Communicator& comm,
                                               const ddp::DdpOptions& options, bool zero);

}  // namespace book::prod
