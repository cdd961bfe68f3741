// ZeRO-3: chapter 4's model, owning no parameters, run layer by layer on parameters all-gathered
// just in time (and the next layer's prefetched), its gradients reduce-scattered layer by layer.
#include "chapters/06_zero/zero3_trainer.h"

#include <algorithm>
#include <optional>
#include <sstream>
#include <string>
#include <utility>

#include "chapters/04_training_baseline/mixed_precision.h"
#include "chapters/04_training_baseline/optimizer.h"
#include "chapters/06_zero/gradient_shards.h"
#include "chapters/06_zero/layer_gather.h"
#include "chapters/06_zero/sharded_optimizer.h"
#include "common/check.h"
#include "common/trace.h"

namespace book::zero {
namespace {

bool is_mixed(DType precision) { return precision != DType::kF32; }

std::size_t largest_block(const train::ParameterLayout& layout) {
  std::size_t u = 0;
  for (int l = 0; l < layout.config().n_layer; ++l) {
    const auto [b, e] = layout.layer_range(l);
    u = std::max(u, e - b);
  }
  return u;
}

std::size_t outer_size(const train::ParameterLayout& layout) {
  const auto [eb, ee] = layout.embedding_range();
  const auto [hb, he] = layout.head_range();
  return (ee - eb) + (he - hb);
}

train::ModelOptions<float> unowned(MemoryTracker* tracker) {
  train::ModelOptions<float> o;
  o.tracker = tracker;
  o.own_parameters = false;  // chapter 4's seam: the tensors are pointed at the gather buffers
  return o;
}

std::size_t if_mixed(DType p, std::size_t n) { return is_mixed(p) ? n : 0; }
std::size_t if_f32(DType p, std::size_t n) { return is_mixed(p) ? 0 : n; }

}  // namespace

std::vector<ddp::FlatRange> zero3_units(const train::ParameterLayout& layout) {
  std::vector<ddp::FlatRange> units;
  const auto [hb, he] = layout.head_range();
  units.push_back({hb, he});
  for (int l = layout.config().n_layer - 1; l >= 0; --l) {
    const auto [b, e] = layout.layer_range(l);
    units.push_back({b, e});
  }
  const auto [eb, ee] = layout.embedding_range();
  units.push_back({eb, ee});
  return units;
}

std::uint64_t zero3_communication_bytes(const train::ParameterLayout& layout, const ShardPlan& plan,
                                        DType precision) {
  if (is_mixed(precision)) return 2 * (plan.largest_bucket + plan.largest_piece);
  const std::uint64_t gathered = 2 * largest_block(layout) + outer_size(layout);
  return 4 * (2 * gathered + plan.largest_piece);
}

StepTraffic zero3_traffic_per_step(const ShardPlan& plan, DType precision, int micro_batches) {
  StepTraffic t;
  const int n = plan.world, r = plan.rank;
  for (const ddp::FlatRange& b : plan.buckets) {
    t.collectives += 3 * micro_batches;
    if (n == 1) continue;
    const std::uint64_t mine = coll::shard_of(b.size(), n, r).count;
    const std::uint64_t next = coll::shard_of(b.size(), n, (r + 1) % n).count;
    t.elements_sent +=
        static_cast<std::uint64_t>(micro_batches) * (2 * (b.size() - next) + (b.size() - mine));
  }
  t.bytes_sent = t.elements_sent * (is_mixed(precision) ? 2 : 4);
  return t;
}

Zero3Trainer::Zero3Trainer(coll::Communicator& comm, const ZeroOptions& options,
                           MemoryTracker* tracker, bool prefetch)
    : comm_(comm),
      options_(checked_options(comm, options, true)),
      prefetch_(prefetch),
      local_batch_(options_.train.micro_batch / comm.size()),
      task_(options_.train.digits),
      tracker_(tracker != nullptr ? tracker : &own_tracker_),
      model_(options_.train.model, local_batch_, unowned(tracker_)),
      acts_(model_),
      plan_(plan_shards(zero3_units(model_.layout()), comm.size(), comm.rank(), Stage::kZero3)),
      largest_block_(largest_block(model_.layout())),
      master_(plan_.owned, mixed() ? MemoryCategory::kMasterWeights : MemoryCategory::kParameters,
              tracker_),
      shard16_(if_mixed(options_.train.precision, plan_.owned), MemoryCategory::kParameters,
               tracker_),
      grad32_(plan_.owned, 0.0f, mixed() ? MemoryCategory::kOther : MemoryCategory::kGradients,
              tracker_),
      grad16_(if_mixed(options_.train.precision, plan_.owned), MemoryCategory::kGradients,
              tracker_),
      block_params_(2 * largest_block_,
                    mixed() ? MemoryCategory::kOther : MemoryCategory::kCommunication, tracker_),
      block_grads_(2 * largest_block_,
                   mixed() ? MemoryCategory::kOther : MemoryCategory::kCommunication, tracker_),
      outer_params_(outer_size(model_.layout()),
                    mixed() ? MemoryCategory::kOther : MemoryCategory::kCommunication, tracker_),
      outer_grads_(outer_size(model_.layout()),
                   mixed() ? MemoryCategory::kOther : MemoryCategory::kCommunication, tracker_),
      staging16_(if_mixed(options_.train.precision, plan_.largest_bucket),
                 MemoryCategory::kCommunication, tracker_),
      receive32_(if_f32(options_.train.precision, plan_.largest_piece),
                 MemoryCategory::kCommunication, tracker_),
      receive16_(if_mixed(options_.train.precision, plan_.largest_piece),
                 MemoryCategory::kCommunication, tracker_),
      add_scratch_(if_mixed(options_.train.precision, 2 * plan_.largest_piece),
                   MemoryCategory::kOther, tracker_),
      scaler_(options_.train.scaler),
      data_rng_(train::training_data_stream(options_.train)),
      sampler_({options_.train.micro_batch, options_.train.micro_batch, comm.size(), false, 0},
               comm.rank()) {
  adam_.reserve(plan_.pieces.size());
  for (const ddp::FlatRange& p : plan_.pieces) adam_.emplace_back(p.begin, p.end, tracker_);
  {  // chapter 4's initialisation of the whole model, of which this rank keeps its pieces
    std::vector<float> whole(plan_.total);
    train::init_parameters(model_.layout(), options_.train.seed, std::span<float>(whole));
    for (std::size_t u = 0; u < plan_.pieces.size(); ++u) {
      const ddp::FlatRange& p = plan_.pieces[u];
      std::copy(whole.begin() + p.begin, whole.begin() + p.end, master_piece(u).begin());
    }
  }
  if (mixed()) train::encode(options_.train.precision, master_.span(), shard16_.span());
  async_ = std::make_unique<coll::AsyncCommunicator>(comm_);  // its lane is "comm"
}

Zero3Trainer::~Zero3Trainer() = default;

std::span<float> Zero3Trainer::master_piece(std::size_t unit) {
  return master_.span().subspan(plan_.offsets[unit], plan_.pieces[unit].size());
}

// Units: 0 is the final LayerNorm, 1..L the blocks L−1..0, L+1 the embeddings. Block l uses
// buffer slot l mod 2: the slot of the layer that ran two layers ago, long finished.
std::size_t Zero3Trainer::slot_of(std::size_t unit) const {
  const std::size_t layer = static_cast<std::size_t>(options_.train.model.n_layer) - unit;
  return layer % 2;
}

std::span<float> Zero3Trainer::params_of(std::size_t unit) {
  const std::size_t size = plan_.buckets[unit].size(), last = plan_.buckets.size() - 1;
  const std::size_t embeddings = plan_.buckets[last].size();
  if (unit == last) return outer_params_.span().first(size);
  if (unit == 0) return outer_params_.span().subspan(embeddings, size);
  return block_params_.span().subspan(slot_of(unit) * largest_block_, size);
}

std::span<float> Zero3Trainer::grads_of(std::size_t unit) {
  const std::size_t size = plan_.buckets[unit].size(), last = plan_.buckets.size() - 1;
  const std::size_t embeddings = plan_.buckets[last].size();
  if (unit == last) return outer_grads_.span().first(size);
  if (unit == 0) return outer_grads_.span().subspan(embeddings, size);
  return block_grads_.span().subspan(slot_of(unit) * largest_block_, size);
}

void Zero3Trainer::bind(std::size_t unit) {
  const ddp::FlatRange& b = plan_.buckets[unit];
  model_.bind_range(b.begin, b.end, params_of(unit).data(), grads_of(unit).data());
}

//! [zero3_gather]
// Starts the all-gather of unit `unit` on the communication thread: this rank's piece (16-bit in
// mixed precision, else the FP32 weights themselves) into the FP32 buffer the model reads.
coll::CollectiveHandle Zero3Trainer::gather(std::size_t unit) {
  const DType wire = options_.train.precision;
  const ddp::FlatRange& p = plan_.pieces[unit];
  const coll::ConstBuffer piece =
      mixed() ? coll::ConstBuffer(shard16_.data() + plan_.offsets[unit], p.size(), wire)
              : coll::ConstBuffer(std::span<const float>(master_piece(unit)));
  const std::span<float> full = params_of(unit);
  std::ostringstream what;
  what << "all_gather of unit " << unit << " (" << full.size() << " parameters)";
  ++counts_.collectives;
  return async_->submit(what.str(), [this, piece, full](coll::Communicator& comm) {
    gather_layer_parameters(comm, piece, staging16_.span(), full);
  });
}
//! [zero3_gather]

//! [zero3_reduce]
// Starts the reduce-scatter of unit `unit`'s gradients (chapter 6's reduce_scatter_bucket) and
// adds the mean of this rank's piece to its gradient shard: the layer's full gradient can be
// dropped as soon as this finishes.
coll::CollectiveHandle Zero3Trainer::reduce(std::size_t unit) {
  const DType wire = options_.train.precision;
  const std::size_t count = plan_.pieces[unit].size(), at = plan_.offsets[unit];
  const std::span<float> grads = grads_of(unit);
  std::ostringstream what;
  what << "reduce_scatter of unit " << unit << " (" << grads.size() << " gradients)";
  ++counts_.collectives;
  return async_->submit(what.str(), [this, wire, count, at, grads](coll::Communicator& comm) {
    if (wire == DType::kF32) {
      const std::span<float> got = receive32_.span().first(count);
      reduce_scatter_bucket(comm, wire, grads, {}, coll::Buffer(got));
      for (std::size_t i = 0; i < count; ++i) grad32_[at + i] += got[i];
      return;
    }
    const std::span<std::uint16_t> got = receive16_.span().first(count);
    reduce_scatter_bucket(comm, wire, grads, staging16_.span(),
                          coll::Buffer(got.data(), count, wire));
    // The shard accumulates in 16 bits, as on a GPU (the CPU adds in FP32 scratch).
    const std::span<std::uint16_t> shard = grad16_.span().subspan(at, count);
    const std::span<float> sum = add_scratch_.span().first(count);
    const std::span<float> add = add_scratch_.span().subspan(plan_.largest_piece, count);
    train::decode(wire, shard, sum);
    train::decode(wire, got, add);
    for (std::size_t i = 0; i < count; ++i) sum[i] += add[i];
    train::encode(wire, sum, shard);
  });
}
//! [zero3_reduce]

//! [zero3_micro_batch]
double Zero3Trainer::micro_batch(const train::Batch& batch, float loss_scale, bool /*last*/) {
  const int layers = options_.train.model.n_layer;
  const std::size_t head = 0, embeddings = plan_.buckets.size() - 1;
  auto unit = [layers](int layer) { return static_cast<std::size_t>(layers - layer); };
  double loss = 0;
  std::vector<std::optional<coll::CollectiveHandle>> gathered(plan_.buckets.size());
  auto ready = [&](std::size_t u) {  // gathered[u], started now if it was not prefetched
    if (!gathered[u]) gathered[u] = gather(u);
    const train::StepSpan timed = span("wait for parameters", "wait");
    gathered[u]->wait();
    gathered[u].reset();
  };

  // Forward: the outer unit (embeddings + final LayerNorm) stays from embed to head; each block
  // is gathered just before it runs while the next one's gather is already under way.
  gathered[embeddings] = gather(embeddings);
  gathered[head] = gather(head);
  if (prefetch_) gathered[unit(0)] = gather(unit(0));
  ready(embeddings), ready(head);
  bind(embeddings), bind(head);
  model_.embed_forward(acts_, batch.tokens.data(), batch.batch, batch.seq_len);
  for (int l = 0; l < layers; ++l) {
    ready(unit(l));
    if (prefetch_ && l + 1 < layers) gathered[unit(l + 1)] = gather(unit(l + 1));
    bind(unit(l));
    const train::StepSpan timed = span("forward h" + std::to_string(l), "forward");
    model_.layers_forward(acts_, l, l + 1);
  }  // block l's slot is free once block l + 2 is gathered into it
  {
    const train::StepSpan timed = span("head forward", "forward");
    loss = model_.head_forward(acts_, batch.targets.data());
  }

  // Backward: the outer unit and every block gathered again (they were dropped after forward),
  // each block's gradient reduce-scattered the moment its backward ends.
  gathered[head] = gather(head);
  gathered[embeddings] = gather(embeddings);
  if (prefetch_) gathered[unit(layers - 1)] = gather(unit(layers - 1));
  ready(head), ready(embeddings);
  std::fill(outer_grads_.begin(), outer_grads_.end(), 0.0f);
  bind(embeddings), bind(head);
  {
    const train::StepSpan timed = span("head backward", "backward");
    model_.head_backward(acts_, loss_scale);
  }
  const coll::CollectiveHandle head_reduced = reduce(head);  // the final LayerNorm is done
  for (int l = layers - 1; l >= 0; --l) {
    ready(unit(l));
    if (prefetch_ && l > 0) gathered[unit(l - 1)] = gather(unit(l - 1));
    const std::size_t slot = slot_of(unit(l));
    if (pending_reduce_[slot]) {  // the slot's last gradient must have left before it is reused
      const train::StepSpan timed = span("wait for gradients", "wait");
      pending_reduce_[slot]->wait();
      pending_reduce_[slot].reset();
    }
    const std::span<float> grads = grads_of(unit(l));
    std::fill(grads.begin(), grads.end(), 0.0f);
    bind(unit(l));
    {
      const train::StepSpan timed = span("backward h" + std::to_string(l), "backward");
      model_.layers_backward(acts_, l + 1, l);
    }
    pending_reduce_[slot] = reduce(unit(l));
  }
  {
    const train::StepSpan timed = span("embedding backward", "backward");
    model_.embed_backward(acts_);  // wte's gradient: the head's use plus the embedding's
  }
  const coll::CollectiveHandle embeddings_reduced = reduce(embeddings);
  const train::StepSpan timed = span("wait for gradients", "wait");
  head_reduced.wait();
  for (std::optional<coll::CollectiveHandle>& h : pending_reduce_)
    if (h) h->wait(), h.reset();
  embeddings_reduced.wait();
  return loss;
}
//! [zero3_micro_batch]

bool Zero3Trainer::unscale_gradients(float loss_scale) {
  const train::StepSpan timed = span("optimizer", "optimizer");
  if (mixed()) {
    train::decode(options_.train.precision, grad16_.span(), grad32_.span());
    train::unscale(grad32_.span(), loss_scale);
  }
  double bad = train::all_finite(grad32_.span()) ? 0.0 : 1.0;
  comm_.all_reduce(std::span<double>(&bad, 1), coll::ReduceOp::kMax);
  return bad == 0.0;
}

train::StepSpan Zero3Trainer::span(std::string name, std::string category) {
  return train::StepSpan(comm_.trace(), comm_.trace_track(), "compute", std::move(name),
                         std::move(category));
}

train::Batch Zero3Trainer::next_batch() {
  return local_batch(task_, data_rng_, sampler_, options_.train.micro_batch);
}

//! [zero3_step]
train::StepResult Zero3Trainer::step() {
  counts_ = {};
  const coll::Counters before = async_->communicator().counters();
  const train::StepResult result = train::run_step(options_.train, step_, scaler_, *this);
  const coll::Counters after = async_->communicator().counters();
  counts_.bytes_sent = after.bytes_sent - before.bytes_sent;
  counts_.messages_sent = after.messages_sent - before.messages_sent;
  step_ = result.step;
  return result;
}

void Zero3Trainer::zero_gradients() {  // the shards the micro-batches' reduce-scatters add into
  std::fill(grad32_.begin(), grad32_.end(), 0.0f);
  std::fill(grad16_.begin(), grad16_.end(), std::uint16_t{0});  // +0 in bf16 and f16
}

float Zero3Trainer::mean_loss(double loss_sum, int micro_batches) {
  comm_.all_reduce(std::span<double>(&loss_sum, 1), coll::ReduceOp::kSum);  // for the log only
  return static_cast<float>(loss_sum / (micro_batches * comm_.size()));
}

// ZeRO-1/2's sharded step; nothing to all-gather: the next forward gathers what it needs.
double Zero3Trainer::clip_and_update(float lr) {
  const train::StepSpan timed = span("optimizer", "optimizer");
  std::vector<std::span<float>> master, grads;
  for (std::size_t u = 0; u < plan_.pieces.size(); ++u) {
    master.push_back(master_piece(u));
    grads.push_back(grad32_.span().subspan(plan_.offsets[u], plan_.pieces[u].size()));
  }
  const double norm = shard_optimizer_step(&comm_, model_.layout(), plan_.pieces, master, grads,
                                           adam_, lr, options_.train.adamw,
                                           options_.train.clip_norm);
  if (mixed()) train::encode(options_.train.precision, master_.span(), shard16_.span());
  return norm;
}
//! [zero3_step]

ModelStateBytes Zero3Trainer::measured_model_state() const {
  ModelStateBytes b;
  b.parameters = tracker_->current(MemoryCategory::kParameters);
  b.gradients = tracker_->current(MemoryCategory::kGradients);
  b.master_weights = tracker_->current(MemoryCategory::kMasterWeights);
  b.optimizer_states = tracker_->current(MemoryCategory::kOptimizerStates);
  return b;
}

std::vector<float> Zero3Trainer::master_weights() {
  std::vector<float> all(plan_.total);
  for (std::size_t u = 0; u < plan_.pieces.size(); ++u) {
    const ddp::FlatRange& b = plan_.buckets[u];
    const std::span<float> piece = master_piece(u);
    const std::vector<float> mine(piece.begin(), piece.end());
    comm_.all_gather(std::span<const float>(mine), std::span<float>(all).subspan(b.begin, b.size()),
                     coll::Algorithm::kRing);
  }
  return all;
}

}  // namespace book::zero
