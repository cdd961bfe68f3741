// The two trainers behind one interface (rank_trainer.h).
#include "chapters/15_production_training/rank_trainer.h"

#include "chapters/04_training_baseline/data.h"
#include "chapters/05_data_parallel/ddp_trainer.h"
#include "chapters/06_zero/zero_trainer.h"

namespace book::prod {
namespace {

class Ddp final : public RankTrainer {
 public:
  Ddp(coll::Communicator& comm, const ddp::DdpOptions& options) : trainer_(comm, options) {}
  train::StepResult step() override { return trainer_.step(); }
  void save(const std::string& path) override { trainer_.save(path); }
  void load(const std::string& path) override { trainer_.load(path); }
  std::int64_t steps_done() const override { return trainer_.steps_done(); }
  std::vector<float> master_weights() override {
    const auto w = trainer_.master_weights();
    return {w.begin(), w.end()};
  }

 private:
  ddp::DdpTrainer trainer_;
};

zero::ZeroOptions zero_options(const ddp::DdpOptions& options) {
  zero::ZeroOptions z;
  z.train = options.train;
  z.stage = zero::Stage::kZero1;
  z.bucket_bytes = options.bucket_bytes;
  return z;
}

class Zero final : public RankTrainer {
 public:
  Zero(coll::Communicator& comm, const ddp::DdpOptions& options)
      : trainer_(comm, zero_options(options)) {}
  train::StepResult step() override { return trainer_.step(); }
  void save(const std::string& path) override { trainer_.save(path); }
  void load(const std::string& path) override { trainer_.load(path); }
  std::int64_t steps_done() const override { return trainer_.steps_done(); }
  std::vector<float> master_weights() override { return trainer_.master_weights(); }

 private:
  zero::ZeroTrainer trainer_;
};

}  // namespace

std::int64_t tokens_per_step(const ddp::DdpOptions& options) {
  return std::int64_t{options.train.micro_batch} * options.train.accumulation *
         train::AdditionTask(options.train.digits).model_context();
}

std::unique_ptr<RankTrainer> make_rank_trainer(coll::Communicator& comm,
                                               const ddp::DdpOptions& options, bool zero) {
  if (zero) return std::make_unique<Zero>(comm, options);
  return std::make_unique<Ddp>(comm, options);
}

}  // namespace book::prod
