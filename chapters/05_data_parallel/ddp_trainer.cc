// The data-parallel step: chapter 4's run_step, with each rung's gradient synchronisation as the
// part between backward and the optimizer. Checkpoints are in ddp_checkpoint.cc.
#include "chapters/05_data_parallel/ddp_trainer.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <sstream>
#include <thread>

#include "chapters/04_training_baseline/checkpoint.h"
#include "chapters/04_training_baseline/clipping.h"
#include "chapters/04_training_baseline/mixed_precision.h"
#include "chapters/04_training_baseline/optimizer.h"
#include "chapters/03_collectives/agreement.h"
#include "common/check.h"
#include "common/timer.h"
#include "common/trace.h"

namespace book::ddp {
namespace {

void sleep_seconds(double seconds) {
  if (seconds > 0) std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

DdpOptions checked_options(coll::Communicator& comm, const DdpOptions& options) {
  DdpOptions resolved = resolve(options, comm.size());
  coll::require_same_on_every_rank(comm, fingerprint(resolved), "data parallel", "options",
                                   "start every rank with the same model, task, batch, "
                                   "schedule, precision, seed, rung and bucket size");
  return resolved;
}

// On a GPU a bucket's all-reduce runs on the NIC and on SMs of its own, beside backward's kernels.
// On a CPU the communication thread shares the cores with the ranks' compute threads, and under a
// real-time policy (the book times with `chrt -f`) a thread of equal priority is never preempted:
// the communication thread would wait for backward to finish, and nothing would overlap. So, only
// under a real-time policy, it takes one priority level more than the thread that started it: it
// preempts backward for the moments it needs a core (a hand-off, adding a chunk) and sleeps while
// it waits for its peers. Under the default policy the kernel time-slices anyway.
void prioritise_communication_thread() {
  thread_local bool done = false;
  if (done) return;
  done = true;
  int policy = 0;
  sched_param param{};
  if (pthread_getschedparam(pthread_self(), &policy, &param) != 0) return;
  if (policy != SCHED_FIFO && policy != SCHED_RR) return;
  param.sched_priority = std::min(param.sched_priority + 1, sched_get_priority_max(policy));
  pthread_setschedparam(pthread_self(), policy, &param);  // best effort: on failure, no boost
}

}  // namespace

double StepTimes::hidden_fraction() const {
  if (comm_busy <= 0) return 0;
  return std::clamp(1.0 - comm_wait / comm_busy, 0.0, 1.0);
}

DdpTrainer::DdpTrainer(coll::Communicator& comm, const DdpOptions& options)
    : comm_(comm),
      options_(checked_options(comm, options)),
      local_batch_(options_.train.micro_batch / comm.size()),
      task_(options_.train.digits),
      model_(options_.train.model, local_batch_),
      acts_(model_),
      master_(mixed() ? model_.layout().total() : 0),
      low_weights_(mixed() ? model_.layout().total() : 0),
      low_grads_(mixed() ? model_.layout().total() : 0),
      adam_(0, model_.layout().total()),
      scaler_(options_.train.scaler),
      data_rng_(train::training_data_stream(options_.train)),
      sampler_({options_.train.micro_batch, options_.train.micro_batch, comm.size(), false, 0},
               comm.rank()),
      tensors_(tensor_ranges(model_.layout())) {
  model_.init(options_.train.seed);  // every rank the same weights, as chapter 4's Trainer
  if (mixed()) {
    std::copy(model_.params().begin(), model_.params().end(), master_.begin());
    refresh_low_weights();
  }
  verify_replicas();
  coll::Communicator* trace_from = &comm_;
  if (overlaps_backward(options_.rung)) {
    buckets_ = plan_buckets(tensors_, options_.bucket_bytes, sizeof(float));
    BOOK_CHECK(!options_.faults.skip_last_bucket || buckets_.size() >= 2,
               "fault skip_last_bucket needs at least two buckets, the plan has "
                   << buckets_.size() << ": use smaller buckets (bucket_bytes)");
    bucket_seconds_.assign(buckets_.size(), 0.0);
    async_ = std::make_unique<coll::AsyncCommunicator>(comm_);  // its lane is "comm"
    reducer_ = std::make_unique<BucketReducer>(
        buckets_, [this](std::size_t i, const FlatRange& b) { return launch_bucket(i, b); });
    if (options_.hierarchical_ranks_per_node > 0)  // the thread's groups, split on the thread
      async_
          ->submit("split by node",
                   [this](coll::Communicator& comm) {
                     nodes_ = std::make_unique<NodeGroups>(
                         split_by_node(comm, options_.hierarchical_ranks_per_node));
                   })
          .wait();
  } else {
    grad_comm_ = comm_.split(0, comm_.rank());
    grad_comm_->set_group_name(comm_.group() + "/gradients");
    grad_comm_->set_trace(trace_from->trace(), "comm", comm_.trace_track());
    if (options_.hierarchical_ranks_per_node > 0)
      nodes_ = std::make_unique<NodeGroups>(
          split_by_node(*grad_comm_, options_.hierarchical_ranks_per_node));
  }
}

DdpTrainer::~DdpTrainer() = default;

std::int64_t DdpTrainer::tokens_per_step() const {
  return std::int64_t{options_.train.micro_batch} * options_.train.accumulation *
         task_.model_context();
}

std::span<float> DdpTrainer::master() {
  return mixed() ? std::span<float>(master_) : model_.params().span();
}

std::span<const float> DdpTrainer::master_weights() const {
  return mixed() ? std::span<const float>(master_) : std::span<const float>(model_.params().span());
}

void DdpTrainer::refresh_low_weights() {  // as chapter 4's Trainer: through 16 bits and back
  train::encode(options_.train.precision, master_, low_weights_);
  train::decode(options_.train.precision, low_weights_, model_.params().span());
}

std::uint64_t DdpTrainer::parameter_fingerprint() const {
  const std::span<const float> master = master_weights();
  const std::uint64_t a =
      train::fnv1a64({reinterpret_cast<const std::uint8_t*>(master.data()), master.size_bytes()});
  const std::uint64_t b = train::fnv1a64(
      {reinterpret_cast<const std::uint8_t*>(model_.params().data()), model_.params().bytes()});
  return a ^ (b * 0x9e3779b97f4a7c15ULL);
}

void DdpTrainer::verify_replicas() {
  coll::require_same_on_every_rank(comm_, parameter_fingerprint(), "data parallel",
                                   "parameters",
                                   "replicas must start equal and stay equal (same binary, same "
                                   "options, the same checkpoint on every rank)");
}

coll::Counters DdpTrainer::gradient_counters() const {
  coll::Counters sum = grad_comm_ ? grad_comm_->counters() : coll::Counters{};
  if (async_) {
    const coll::Counters& a = async_->communicator().counters();
    sum.bytes_sent += a.bytes_sent, sum.bytes_received += a.bytes_received;
    sum.messages_sent += a.messages_sent, sum.messages_received += a.messages_received;
  }
  if (nodes_)
    for (const coll::Communicator* group : {nodes_->intra.get(), nodes_->inter.get()}) {
      const coll::Counters& c = group->counters();
      sum.bytes_sent += c.bytes_sent, sum.bytes_received += c.bytes_received;
      sum.messages_sent += c.messages_sent, sum.messages_received += c.messages_received;
    }
  return sum;
}

void DdpTrainer::sleep_for_link(std::size_t bytes) const {
  sleep_seconds(options_.faults.link_delay_s_per_mib * static_cast<double>(bytes) / (1 << 20));
}

train::StepSpan DdpTrainer::span(const char* name, const char* category, double* seconds) {
  return train::StepSpan(comm_.trace(), comm_.trace_track(), "compute", name, category, seconds);
}

void DdpTrainer::zero_gradients() { model_.zero_grad(); }

train::Batch DdpTrainer::next_batch() {
  const train::StepSpan timed = span("data", "data", &times_.data);
  // The stream is chapter 4's: every rank draws the whole global micro-batch (the generator is a
  // sequence, so skipping rows would still draw them) and keeps the rows the sampler deals it.
  const train::Batch global =
      task_.batch(data_rng_, train::Split::kTrain, options_.train.micro_batch);
  const std::vector<std::int64_t> rows = sampler_.indices(0, 0);
  train::Batch local{static_cast<int>(rows.size()), global.seq_len, {}, {}};
  const auto len = static_cast<std::ptrdiff_t>(global.seq_len);
  for (std::int64_t row : rows) {
    local.tokens.insert(local.tokens.end(), global.tokens.begin() + row * len,
                        global.tokens.begin() + (row + 1) * len);
    local.targets.insert(local.targets.end(), global.targets.begin() + row * len,
                         global.targets.begin() + (row + 1) * len);
  }
  sleep_seconds(options_.faults.loader_delay_s);
  return local;
}

//! [launch_bucket]
coll::CollectiveHandle DdpTrainer::launch_bucket(std::size_t index, const FlatRange& bucket) {
  const std::span<float> data = model_.grads().span().subspan(bucket.begin, bucket.size());
  std::ostringstream what;
  what << "all_reduce of bucket " << index << " (" << bucket.size() << " x f32)";
  if (options_.faults.skip_last_bucket && index + 1 == buckets_.size())  // the broken candidate
    return async_->submit(what.str() + " skipped (injected fault)", [](coll::Communicator&) {});
  return async_->submit(what.str(), [this, index, data](coll::Communicator& comm) {
    prioritise_communication_thread();
    const Timer timer;  // on the communication thread: how long the wire was busy
    if (options_.faults.link_delay_s_per_mib > 0) {
      Trace::Span delay(comm.trace(), comm.trace_track(), "comm", "injected link delay", "delay");
      sleep_for_link(data.size_bytes());
    }
    all_reduce_gradients(comm, data);
    bucket_seconds_[index] = timer.seconds();
  });
}
//! [launch_bucket]

void DdpTrainer::all_reduce_gradients(coll::Communicator& comm, std::span<float> data) {
  if (nodes_)
    hierarchical_all_reduce(*nodes_, data, coll::ReduceOp::kAvg, options_.algorithm);
  else
    comm.all_reduce(data, coll::ReduceOp::kAvg, options_.algorithm);
}

//! [ddp_step]
train::StepResult DdpTrainer::step() {
  const Timer step_timer;
  times_ = {};
  const FaultInjection& faults = options_.faults;
  BOOK_CHECK(!(faults.fail_rank == comm_.rank() && faults.fail_step == step_ + 1),
             "injected failure: rank " << comm_.rank() << " stops at step " << step_ + 1);
  const coll::Counters before = gradient_counters();
  const train::StepResult result = train::run_step(options_.train, step_, scaler_, *this);
  const coll::Counters after = gradient_counters();
  times_.gradient_bytes = after.bytes_sent - before.bytes_sent;
  times_.gradient_messages = after.messages_sent - before.messages_sent;
  if (!overlaps_backward(options_.rung)) times_.comm_busy = times_.comm_wait;  // all exposed
  times_.step = step_timer.seconds();
  step_ = result.step;
  return result;
}

double DdpTrainer::micro_batch(const train::Batch& batch, float loss_scale, bool last) {
  double loss = 0;
  {
    const train::StepSpan timed = span("forward", "forward", &times_.forward);
    loss = model_.forward(acts_, batch.tokens.data(), batch.targets.data(), batch.batch,
                          batch.seq_len);
    if (options_.faults.straggler_rank == comm_.rank())
      sleep_seconds(options_.faults.straggler_delay_s);
  }
  const train::StepSpan timed = span("backward", "backward", &times_.backward);
  if (options_.faults.skip_accumulation_mean)  // the broken candidate: the sum, not the mean
    loss_scale *= static_cast<float>(options_.train.accumulation);
  if (reducer_ && synchronizes(last)) {
    reducer_->begin_pass();
    model_.backward(acts_, loss_scale, reducer_->hook());  // buckets start in here
  } else {
    model_.backward(acts_, loss_scale);
  }
  return loss;
}

// Rung 4 (PyTorch's no_sync): earlier micro-batches only accumulate locally.
bool DdpTrainer::synchronizes(bool last) const { return options_.rung != Rung::kNoSync || last; }

void DdpTrainer::synchronize_gradients(bool last) {
  if (!synchronizes(last)) return;
  const train::StepSpan timed = span("wait for gradients", "wait", &times_.comm_wait);
  const std::span<float> grads = model_.grads().span();
  switch (options_.rung) {
    case Rung::kPerTensor:
      for (const FlatRange& t : tensors_) sleep_for_link(t.size() * sizeof(float));
      if (nodes_) {
        for (const FlatRange& t : tensors_)
          all_reduce_gradients(*grad_comm_, grads.subspan(t.begin, t.size()));
        times_.collectives += static_cast<std::int64_t>(tensors_.size());
      } else {
        times_.collectives +=
            all_reduce_per_tensor(*grad_comm_, grads, tensors_, options_.algorithm);
      }
      break;
    case Rung::kFlat:
      sleep_for_link(grads.size_bytes());
      if (nodes_) {
        all_reduce_gradients(*grad_comm_, grads);
        times_.collectives += 1;
      } else {
        times_.collectives += all_reduce_flat(*grad_comm_, grads, options_.algorithm);
      }
      break;
    case Rung::kBuckets:
    case Rung::kNoSync:
      reducer_->finish();  // the exposed part: what backward did not hide
      times_.collectives += static_cast<std::int64_t>(buckets_.size());
      for (double s : bucket_seconds_) times_.comm_busy += s;
      break;
  }
}
//! [ddp_step]

float DdpTrainer::mean_loss(double loss_sum, int micro_batches) {
  {
    const train::StepSpan timed = span("loss all-reduce", "loss", &times_.loss_sync);
    comm_.all_reduce(std::span<double>(&loss_sum, 1), coll::ReduceOp::kSum);  // for the log only
  }
  return static_cast<float>(loss_sum / (micro_batches * comm_.size()));
}

// From here on, chapter 4's Trainer: every rank has the same gradients, so every rank makes the
// same decisions (skip, clip factor) and the same update.
bool DdpTrainer::unscale_gradients(float loss_scale) {
  const train::StepSpan timed = span("optimizer", "optimizer", &times_.optimizer);
  squares_ = train::unscaled_sum_of_squares(options_.train.precision, model_.grads().span(),
                                            low_grads_, loss_scale);
  return std::isfinite(squares_);
}

double DdpTrainer::clip_and_update(float lr) {
  const train::StepSpan timed = span("optimizer", "optimizer", &times_.optimizer);
  const std::span<float> grads = model_.grads().span();
  train::scale_gradients(grads, train::clip_coefficient(squares_, options_.train.clip_norm));
  train::adamw_update(model_.layout(), adam_, master(), grads, lr, options_.train.adamw);
  if (mixed()) refresh_low_weights();
  return std::sqrt(squares_);
}

}  // namespace book::ddp
