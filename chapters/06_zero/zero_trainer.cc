// The ZeRO step: chapter 4's run_step with chapter 5's data-parallel parts, except that the
// gradient all-reduce becomes a reduce-scatter, the optimizer updates this rank's pieces only, and
// an all-gather publishes the new weights.
#include "chapters/06_zero/zero_trainer.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <utility>

#include "chapters/04_training_baseline/mixed_precision.h"
#include "chapters/04_training_baseline/optimizer.h"
#include "chapters/05_data_parallel/gradient_sync.h"
#include "chapters/06_zero/gradient_shards.h"
#include "chapters/06_zero/sharded_optimizer.h"
#include "chapters/03_collectives/agreement.h"
#include "common/check.h"
#include "common/trace.h"

namespace book::zero {
namespace {

// In mixed precision the model's FP32 tensors are the CPU's working copies (chapter 4).
train::ModelOptions<float> model_options(const ZeroOptions& options, MemoryTracker* tracker) {
  train::ModelOptions<float> o;
  o.tracker = tracker;
  if (options.train.precision != DType::kF32)
    o.parameter_category = o.gradient_category = MemoryCategory::kOther;
  return o;
}

ShardPlan make_plan(const train::ParameterLayout& layout, const ZeroOptions& options, int world,
                    int rank) {
  return plan_shards(
      ddp::plan_buckets(ddp::tensor_ranges(layout), options.bucket_bytes, sizeof(float)), world,
      rank, options.stage);
}

std::size_t if_mixed(const ZeroOptions& o, std::size_t n) {
  return o.train.precision != DType::kF32 ? n : 0;
}

}  // namespace

ZeroOptions checked_options(coll::Communicator& comm, const ZeroOptions& options,
                            bool sharded_parameters) {
  if (sharded_parameters)
    BOOK_CHECK(options.stage == Stage::kZero3,
               "Zero3Trainer runs stage 3 only; stages 0-2 are ZeroTrainer's (got stage "
                   << static_cast<int>(options.stage) << ")");
  else
    BOOK_CHECK(options.stage != Stage::kZero3,
               "ZeroTrainer runs stages 0, 1 and 2; stage 3 (FSDP) is Zero3Trainer "
               "(zero3_trainer.h), or make_trainer for any stage");
  ZeroOptions resolved = resolve(options, comm.size());
  coll::require_same_on_every_rank(comm, fingerprint(resolved), "ZeRO", "options",
                                   "start every rank with the same model, task, batch, "
                                   "schedule, precision, seed, stage and bucket size");
  return resolved;
}

train::Batch local_batch(const train::AdditionTask& task, Rng& rng,
                         const ddp::DistributedSampler& sampler, int micro_batch) {
  // The sampler's rows index the micro-batch drawn here: a larger dataset would read past it.
  BOOK_CHECK(sampler.options().dataset_size == micro_batch,
             "local_batch: the sampler deals out rows of a dataset of "
                 << sampler.options().dataset_size << " but the micro-batch has " << micro_batch
                 << " sequences: build the sampler with dataset_size = micro_batch");
  const train::Batch global = task.batch(rng, train::Split::kTrain, micro_batch);
  const std::vector<std::int64_t> rows = sampler.indices(0, 0);
  train::Batch local{static_cast<int>(rows.size()), global.seq_len, {}, {}};
  const auto len = static_cast<std::ptrdiff_t>(global.seq_len);
  for (std::int64_t row : rows) {
    local.tokens.insert(local.tokens.end(), global.tokens.begin() + row * len,
                        global.tokens.begin() + (row + 1) * len);
    local.targets.insert(local.targets.end(), global.targets.begin() + row * len,
                         global.targets.begin() + (row + 1) * len);
  }
  return local;
}

ZeroTrainer::ZeroTrainer(coll::Communicator& comm, const ZeroOptions& options,
                         MemoryTracker* tracker)
    : comm_(comm),
      options_(checked_options(comm, options, false)),
      local_batch_(options_.train.micro_batch / comm.size()),
      task_(options_.train.digits),
      tracker_(tracker != nullptr ? tracker : &own_tracker_),
      model_(options_.train.model, local_batch_, model_options(options_, tracker_)),
      acts_(model_),
      plan_(make_plan(model_.layout(), options_, comm.size(), comm.rank())),
      master_(if_mixed(options_, plan_.owned), MemoryCategory::kMasterWeights, tracker_),
      low_weights_(if_mixed(options_, plan_.total), MemoryCategory::kParameters, tracker_),
      low_grads_(if_mixed(options_, options_.stage == Stage::kZero2 ? plan_.owned : plan_.total),
                 MemoryCategory::kGradients, tracker_),
      reduce_staging_(
          options_.stage == Stage::kZero2 ? if_mixed(options_, plan_.largest_bucket) : 0,
          MemoryCategory::kCommunication, tracker_),
      gather_staging16_(options_.stage != Stage::kDdp ? if_mixed(options_, plan_.largest_piece) : 0,
                        MemoryCategory::kCommunication, tracker_),
      gather_staging32_(options_.stage != Stage::kDdp && !mixed() ? plan_.largest_piece : 0,
                        MemoryCategory::kCommunication, tracker_),
      scaler_(options_.train.scaler),
      data_rng_(train::training_data_stream(options_.train)),
      sampler_({options_.train.micro_batch, options_.train.micro_batch, comm.size(), false, 0},
               comm.rank()) {
  adam_.reserve(plan_.pieces.size());
  for (const ddp::FlatRange& p : plan_.pieces) adam_.emplace_back(p.begin, p.end, tracker_);
  model_.init(options_.train.seed);  // every rank the same weights, as chapter 4's Trainer
  if (mixed()) {
    const std::span<const float> params = model_.params().span();
    for (std::size_t i = 0; i < plan_.pieces.size(); ++i) {
      const ddp::FlatRange& p = plan_.pieces[i];
      std::copy(params.begin() + p.begin, params.begin() + p.end, master_piece(i).begin());
    }
    // As chapter 4's Trainer: the weights the first forward reads went through 16 bits.
    train::encode(options_.train.precision, params, low_weights_.span());
    train::decode(options_.train.precision, low_weights_.span(), model_.params().span());
  }
  zero_comm_ = comm_.split(0, comm_.rank());
  zero_comm_->set_group_name(comm_.group() + "/zero");
  zero_comm_->set_trace(comm_.trace(), "comm", comm_.trace_track());
  if (options_.stage == Stage::kZero2) {
    async_ = std::make_unique<coll::AsyncCommunicator>(comm_);  // its lane is "comm"
    reducer_ = std::make_unique<ddp::BucketReducer>(
        plan_.buckets,
        [this](std::size_t i, const ddp::FlatRange& b) { return launch_bucket(i, b); });
  }
}

ZeroTrainer::~ZeroTrainer() = default;

std::span<float> ZeroTrainer::master_piece(std::size_t i) {
  const ddp::FlatRange& p = plan_.pieces[i];
  if (!mixed()) return model_.params().span().subspan(p.begin, p.size());  // FP32: no copy
  return master_.span().subspan(plan_.offsets[i], p.size());
}

// Where bucket i's reduced piece lands, in the wire type: FP32 in the model's gradients at the
// piece's place; 16-bit in the full gradient buffer (stages 0–1) or in the shard (stage 2).
coll::Buffer ZeroTrainer::gradient_piece(std::size_t i) {
  const ddp::FlatRange& p = plan_.pieces[i];
  if (!mixed()) return coll::Buffer(model_.grads().span().subspan(p.begin, p.size()));
  const std::size_t at = options_.stage == Stage::kZero2 ? plan_.offsets[i] : p.begin;
  return coll::Buffer(low_grads_.data() + at, p.size(), options_.train.precision);
}

ModelStateBytes ZeroTrainer::measured_model_state() const {
  ModelStateBytes b;
  b.parameters = tracker_->current(MemoryCategory::kParameters);
  b.gradients = tracker_->current(MemoryCategory::kGradients);
  b.master_weights = tracker_->current(MemoryCategory::kMasterWeights);
  b.optimizer_states = tracker_->current(MemoryCategory::kOptimizerStates);
  return b;
}

coll::Counters ZeroTrainer::gradient_counters() const {
  coll::Counters sum = zero_comm_->counters();
  if (async_) {
    const coll::Counters& a = async_->communicator().counters();
    sum.bytes_sent += a.bytes_sent, sum.bytes_received += a.bytes_received;
    sum.messages_sent += a.messages_sent, sum.messages_received += a.messages_received;
  }
  return sum;
}

train::StepSpan ZeroTrainer::span(std::string name, std::string category) {
  return train::StepSpan(comm_.trace(), comm_.trace_track(), "compute", std::move(name),
                         std::move(category));
}

void ZeroTrainer::zero_gradients() { model_.zero_grad(); }

train::Batch ZeroTrainer::next_batch() {  // chapter 5's: draw the global batch, keep my rows
  return local_batch(task_, data_rng_, sampler_, options_.train.micro_batch);
}

//! [zero2_launch]
// Stage 2: called by chapter 5's BucketReducer the moment backward has finished bucket `index`;
// the reduce-scatter runs on the communication thread while backward goes on below it.
coll::CollectiveHandle ZeroTrainer::launch_bucket(std::size_t index, const ddp::FlatRange& bucket) {
  std::ostringstream what;
  what << "reduce_scatter of bucket " << index << " (" << bucket.size() << " elements)";
  ++counts_.collectives;
  return async_->submit(what.str(), [this, index, bucket](coll::Communicator& comm) {
    const std::span<const float> grads = model_.grads().span().subspan(bucket.begin, bucket.size());
    // One staging buffer serves every bucket: the communication thread runs them one by one.
    reduce_scatter_bucket(comm, options_.train.precision, grads, reduce_staging_.span(),
                          gradient_piece(index));
  });
}
//! [zero2_launch]

//! [zero1_reduce]
// Stages 0 and 1, after the last backward: bucket by bucket, an all-reduce (every rank gets the
// whole mean) or a reduce-scatter (each rank gets the mean of its piece only).
void ZeroTrainer::reduce_gradients() {
  const DType wire = options_.train.precision;
  const std::span<float> grads = model_.grads().span();
  for (std::size_t i = 0; i < plan_.buckets.size(); ++i) {
    const ddp::FlatRange& b = plan_.buckets[i];
    ++counts_.collectives;
    if (options_.stage == Stage::kDdp) {
      coll::Buffer data(grads.subspan(b.begin, b.size()));
      if (mixed()) {
        const std::span<std::uint16_t> bits = low_grads_.span().subspan(b.begin, b.size());
        train::encode(wire, grads.subspan(b.begin, b.size()), bits);
        data = coll::Buffer(bits.data(), bits.size(), wire);
      }
      zero_comm_->all_reduce(data, coll::ReduceOp::kAvg, coll::Algorithm::kRing);
      continue;
    }
    // Stage 1 in mixed precision encodes each bucket into its place in the full 16-bit gradient
    // buffer and reduce-scatters it in place.
    const std::span<std::uint16_t> staging =
        mixed() ? low_grads_.span().subspan(b.begin, b.size()) : std::span<std::uint16_t>();
    reduce_scatter_bucket(*zero_comm_, wire, grads.subspan(b.begin, b.size()), staging,
                          gradient_piece(i));
  }
}
//! [zero1_reduce]

// Mixed precision: the reduced 16-bit gradients of this rank's pieces back to FP32 (into the
// model's gradient buffer, at their places), unscaled; FP32: unscaled in place. Returns whether
// every rank's pieces are finite (one all-reduce of a flag for sharded stages).
bool ZeroTrainer::unscale_gradients(float loss_scale) {
  const train::StepSpan timed = span("optimizer", "optimizer");
  bool finite = true;
  for (std::size_t i = 0; i < plan_.pieces.size(); ++i) {
    const ddp::FlatRange& p = plan_.pieces[i];
    const std::span<float> g = model_.grads().span().subspan(p.begin, p.size());
    if (mixed()) {
      const coll::Buffer bits = gradient_piece(i);
      train::decode(options_.train.precision,
                    {static_cast<const std::uint16_t*>(bits.data), bits.count}, g);
      train::unscale(g, loss_scale);
    }
    finite = finite && train::all_finite(g);
  }
  if (options_.stage != Stage::kDdp) {  // a skipped step must be skipped on every rank
    double bad = finite ? 0.0 : 1.0;
    comm_.all_reduce(std::span<double>(&bad, 1), coll::ReduceOp::kMax);
    finite = bad == 0.0;
  }
  return finite;
}

//! [publish_weights]
// Every rank's new weights to every rank: this rank's pieces (16-bit in mixed precision) are
// all-gathered bucket by bucket into the full weight buffer the next forward reads.
void ZeroTrainer::publish_weights() {
  const DType wire = options_.train.precision;
  for (std::size_t i = 0; i < plan_.pieces.size(); ++i) {
    const ddp::FlatRange& b = plan_.buckets[i];
    const std::span<float> master = master_piece(i);
    if (mixed()) {
      const std::span<std::uint16_t> bits = low_weights_.span().subspan(b.begin, b.size());
      if (options_.stage == Stage::kDdp) {
        train::encode(wire, master, bits);  // every rank updated the whole bucket
        continue;
      }
      const std::span<std::uint16_t> mine = gather_staging16_.span().first(master.size());
      train::encode(wire, master, mine);
      ++counts_.collectives;
      zero_comm_->all_gather(coll::ConstBuffer(mine.data(), mine.size(), wire),
                             coll::Buffer(bits.data(), bits.size(), wire), coll::Algorithm::kRing);
    } else if (options_.stage != Stage::kDdp) {
      const std::span<float> mine = gather_staging32_.span().first(master.size());
      std::copy(master.begin(), master.end(), mine.begin());
      ++counts_.collectives;
      zero_comm_->all_gather(coll::ConstBuffer(std::span<const float>(mine)),
                             coll::Buffer(model_.params().span().subspan(b.begin, b.size())),
                             coll::Algorithm::kRing);
    }
  }
  if (mixed()) train::decode(wire, low_weights_.span(), model_.params().span());
}
//! [publish_weights]

//! [zero_step]
train::StepResult ZeroTrainer::step() {
  counts_ = {};
  const coll::Counters before = gradient_counters();
  const train::StepResult result = train::run_step(options_.train, step_, scaler_, *this);
  const coll::Counters after = gradient_counters();
  counts_.bytes_sent = after.bytes_sent - before.bytes_sent;
  counts_.messages_sent = after.messages_sent - before.messages_sent;
  step_ = result.step;
  return result;
}

double ZeroTrainer::micro_batch(const train::Batch& batch, float loss_scale, bool last) {
  double loss = 0;
  {
    const train::StepSpan timed = span("forward", "forward");
    loss = model_.forward(acts_, batch.tokens.data(), batch.targets.data(), batch.batch,
                          batch.seq_len);
  }
  const train::StepSpan timed = span("backward", "backward");
  // Earlier micro-batches accumulate locally; only the last one's backward reduces (stage 2).
  if (reducer_ && last) {
    reducer_->begin_pass();
    model_.backward(acts_, loss_scale, reducer_->hook());  // reduce-scatters start in here
  } else {
    model_.backward(acts_, loss_scale);
  }
  return loss;
}

void ZeroTrainer::synchronize_gradients(bool last) {
  if (!last) return;  // once per step, after the last backward
  const train::StepSpan timed = span("wait for gradients", "wait");
  if (reducer_)
    reducer_->finish();  // stage 2: what backward did not hide
  else
    reduce_gradients();  // stages 0 and 1
}

float ZeroTrainer::mean_loss(double loss_sum, int micro_batches) {
  comm_.all_reduce(std::span<double>(&loss_sum, 1), coll::ReduceOp::kSum);  // for the log only
  return static_cast<float>(loss_sum / (micro_batches * comm_.size()));
}

// The clip's global norm is the sum over every rank's pieces (stages 1-2: one all-reduce).
double ZeroTrainer::clip_and_update(float lr) {
  const train::StepSpan timed = span("optimizer", "optimizer");
  std::vector<std::span<float>> master, grads;
  for (std::size_t i = 0; i < plan_.pieces.size(); ++i) {
    const ddp::FlatRange& p = plan_.pieces[i];
    master.push_back(master_piece(i));
    grads.push_back(model_.grads().span().subspan(p.begin, p.size()));
  }
  const double norm = shard_optimizer_step(
      options_.stage == Stage::kDdp ? nullptr : &comm_, model_.layout(), plan_.pieces, master,
      grads, adam_, lr, options_.train.adamw, options_.train.clip_norm);
  publish_weights();
  return norm;
}
//! [zero_step]

std::vector<float> ZeroTrainer::master_weights() {
  std::vector<float> all(plan_.total);
  for (std::size_t i = 0; i < plan_.pieces.size(); ++i) {
    const ddp::FlatRange& b = plan_.buckets[i];
    const std::span<float> piece = master_piece(i);
    if (options_.stage == Stage::kDdp) {
      std::copy(piece.begin(), piece.end(), all.begin() + b.begin);
      continue;
    }
    const std::vector<float> mine(piece.begin(), piece.end());
    comm_.all_gather(std::span<const float>(mine), std::span<float>(all).subspan(b.begin, b.size()),
                     coll::Algorithm::kRing);
  }
  return all;
}

}  // namespace book::zero
