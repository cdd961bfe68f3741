// The executor: a schedule's actions run for real on Communicator ranks.
#include "chapters/08_pipeline_parallel/executor.h"

#include <algorithm>
#include <chrono>
#include <map>

#include "chapters/04_training_baseline/parameters.h"
#include "chapters/04_training_baseline/step.h"
#include "chapters/08_pipeline_parallel/block_split.h"
#include "chapters/08_pipeline_parallel/simulator.h"
#include "chapters/08_pipeline_parallel/three_d.h"
#include "common/check.h"
#include "common/rng.h"
#include "common/trace.h"

namespace book::pp {
namespace {

long long steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// One tag per (micro-batch, boundary, direction), so every receive matches exactly one send.
int tag_of(const Shape& shape, int micro_batch, int lower_virtual_stage, bool backward) {
  return (micro_batch * shape.virtual_stages() + lower_virtual_stage) * 2 + (backward ? 1 : 0);
}

}  // namespace

ExecutionLog::ExecutionLog() : origin_ns_(steady_ns()) {}

double ExecutionLog::now_us() const { return (steady_ns() - origin_ns_) / 1e3; }

void ExecutionLog::record(const ExecutedAction& action) {
  const std::lock_guard<std::mutex> lock(mutex_);
  actions_.push_back(action);
}

std::vector<ExecutedAction> ExecutionLog::actions() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return actions_;
}

Timeline ExecutionLog::timeline(const Shape& shape) const {
  Timeline t{shape, std::vector<std::vector<TimedAction>>(shape.stages), 0,
             std::vector<double>(shape.stages, 0)};
  const auto all = actions();
  double origin = all.empty() ? 0 : all.front().start_us;
  for (const auto& a : all) origin = std::min(origin, a.start_us);
  for (const auto& a : all) {
    BOOK_CHECK(a.rank >= 0 && a.rank < shape.stages,
               "ExecutionLog::timeline: rank " << a.rank << " outside p = " << shape.stages);
    t.ranks[a.rank].push_back({a.action, a.start_us - origin, a.end_us - origin});
    t.busy[a.rank] += a.end_us - a.start_us;
    t.makespan = std::max(t.makespan, a.end_us - origin);
  }
  for (auto& rank : t.ranks)
    std::sort(rank.begin(), rank.end(),
              [](const TimedAction& x, const TimedAction& y) { return x.start < y.start; });
  return t;
}

template <typename T>
std::vector<std::unique_ptr<train::Model<T>>> make_rank_models(
    const train::Config& config, int max_batch, const Shape& shape,
    const std::vector<int>& boundaries, int rank, std::uint64_t seed,
    const train::TensorParallelSlice& slice, train::TensorParallelism<T>* tensor_parallel) {
  check_shape(shape, "make_rank_models");
  const int stages = shape.virtual_stages();
  BOOK_CHECK(static_cast<int>(boundaries.size()) == stages + 1 && boundaries.front() == 0 &&
                 boundaries.back() == config.n_layer,
             "make_rank_models: " << boundaries.size() << " cuts for " << stages
                                  << " virtual stages over " << config.n_layer
                                  << " layers; pass p·v + 1 cuts from 0 to n_layer");
  BOOK_CHECK(rank >= 0 && rank < shape.stages,
             "make_rank_models: rank " << rank << " outside p = " << shape.stages);
  std::vector<std::unique_ptr<train::Model<T>>> chunks;
  for (int c = 0; c < shape.chunks; ++c) {
    const int vs = shape.virtual_stage(rank, c);
    BOOK_CHECK(boundaries[vs] < boundaries[vs + 1],
               "make_rank_models: virtual stage " << vs << " has no layers (cuts " << boundaries[vs]
                                                  << ", " << boundaries[vs + 1] << ")");
    train::ModelOptions<T> options;
    options.part = train::ModelPart{boundaries[vs], boundaries[vs + 1], slice};
    options.tensor_parallel = tensor_parallel;
    chunks.push_back(std::make_unique<train::Model<T>>(config, max_batch, options));
    chunks.back()->init(seed);
  }
  return chunks;
}

//! [execute]
template <typename T>
RankResult execute(coll::Communicator& comm, const Schedule& schedule,
                   std::span<const std::unique_ptr<train::Model<T>>> chunks,
                   std::span<const train::Batch> micro_batches, const ExecuteOptions& options) {
  check_schedule(schedule);
  // A schedule that deadlocks is named here at once by the simulator (what each stuck rank waits
  // for), not after the communicator's timeout as "waiting for a message from rank 0".
  simulate(schedule);
  const Shape& shape = schedule.shape;
  const int p = shape.stages, m = shape.micro_batches, rank = comm.rank();
  const int last_stage = shape.virtual_stages() - 1;
  BOOK_CHECK(comm.size() == p, "execute: the communicator has "
                                   << comm.size() << " ranks for p = " << p << " stages");
  BOOK_CHECK(static_cast<int>(chunks.size()) == shape.chunks,
             "execute: rank " << rank << " holds " << chunks.size() << " chunks, the schedule "
                              << shape.chunks);
  BOOK_CHECK(static_cast<int>(micro_batches.size()) == m,
             "execute: " << micro_batches.size() << " micro-batches for m = " << m);
  // B and W split for tensor-parallel blocks is written in chapter 4 but not wired here.
  BOOK_CHECK(!schedule.split_backward || chunks.front()->part().tensor_parallel.size == 1,
             "execute: " << schedule.name << " splits the backward into B and W, which this "
                         << "executor runs for whole blocks only (tensor-parallel degree "
                         << chunks.front()->part().tensor_parallel.size
                         << "); use gpipe, 1f1b or interleaved with tp > 1");
  for (const auto& chunk : chunks) chunk->zero_grad();
  const T scale = T(1) / T(m);
  const coll::Counters before = comm.counters();
  std::map<std::pair<int, int>, std::unique_ptr<train::Activations<T>>> live;  // (mb, chunk)
  std::map<int, std::vector<T>> to_self;  // p = 1 with chunks: messages to this very rank
  // Split backward (ZB-H1): per chunk, views of its parameters and gradients; one workspace for
  // the rank; per micro-batch in flight, what each block's W needs from its B.
  std::vector<train::ModelTensors<T>> params, grads;
  for (const auto& chunk : chunks) {
    params.push_back(train::bind(chunk->layout(), chunk->params().data()));
    grads.push_back(train::bind(chunk->layout(), chunk->grads().data()));
  }
  const train::Config& config = chunks.front()->config();
  const int max_batch = chunks.front()->max_batch();
  std::unique_ptr<train::BlockWorkspace<T>> workspace;
  if (schedule.split_backward)
    workspace = std::make_unique<train::BlockWorkspace<T>>(config, train::TensorParallelSlice{},
                                                           max_batch, config.context);
  std::map<std::pair<int, int>, std::vector<WeightGradientInputs<T>>> kept;
  std::vector<T> losses(m, T(0));
  RankResult result;

  auto transfer_out = [&](const T* data, std::size_t n, int dst, int tag) {
    if (dst == rank)
      to_self[tag].assign(data, data + n);
    else
      comm.send(coll::ConstBuffer(std::span<const T>(data, n)), dst, tag);
  };
  auto transfer_in = [&](T* data, std::size_t n, int src, int tag) {
    if (src == rank) {
      std::copy(to_self.at(tag).begin(), to_self.at(tag).end(), data);
      to_self.erase(tag);
    } else {
      comm.recv(coll::Buffer(std::span<T>(data, n)), src, tag);
    }
  };

  for (const Action& a : schedule.ranks[rank]) {
    train::Model<T>& model = *chunks[a.chunk];
    const train::Batch& batch = micro_batches[a.micro_batch];
    const int vs = shape.virtual_stage(rank, a.chunk);
    const int first = model.part().first_layer, last = model.part().last_layer;
    const std::size_t n =
        static_cast<std::size_t>(batch.batch) * batch.seq_len * model.config().d_model;
    ExecutedAction record{rank, a, 0, 0, 0, 0};
    std::unique_ptr<train::Activations<T>>& acts = live[{a.micro_batch, a.chunk}];
    if (a.op == Op::kForward) {
      acts = std::make_unique<train::Activations<T>>(model);
      result.peak_activations = std::max(result.peak_activations, static_cast<int>(live.size()));
      if (vs > 0) {
        acts->set_shape(batch.batch, batch.seq_len);
        transfer_in(acts->residual(first), n, (vs - 1) % p,
                    tag_of(shape, a.micro_batch, vs - 1, false));
      }
    } else if (a.op == Op::kBackward && vs < last_stage) {
      transfer_in(acts->residual_grad(last), n, (vs + 1) % p,
                  tag_of(shape, a.micro_batch, vs, true));
    }
    if (options.log)
      record.start_tick = options.log->tick(), record.start_us = options.log->now_us();
    {
      Trace::Span span(options.trace, rank, "compute", action_name(a, shape.chunks > 1),
                       std::string(op_letter(a.op)));
      if (a.op == Op::kForward) {
        if (vs == 0) model.embed_forward(*acts, batch.tokens.data(), batch.batch, batch.seq_len);
        model.layers_forward(*acts, first, last);
        if (vs == last_stage)
          losses[a.micro_batch] = model.head_forward(*acts, batch.targets.data());
      } else if (a.op == Op::kBackward) {
        if (vs == last_stage) model.head_backward(*acts, scale);
        if (!schedule.split_backward) {
          model.layers_backward(*acts, last, first);  // input and weight gradients together
        } else {  // the input gradient now; what W needs is kept
          auto& keep = kept[{a.micro_batch, a.chunk}];
          for (int l = last - 1; l >= first; --l) {
            keep.emplace_back(config, train::TensorParallelSlice{}, max_batch, config.context);
            block_backward_input(config, {}, params[a.chunk].blocks[l - first],
                                 grads[a.chunk].blocks[l - first], batch.batch, batch.seq_len,
                                 acts->residual(l), acts->residual_grad(l + 1),
                                 acts->residual_grad(l), acts->block(l), *workspace, keep.back());
          }
        }
        if (vs == 0) model.embed_backward(*acts);
      } else {  // W: the weight gradients of the blocks, from what B kept
        const auto& keep = kept.at({a.micro_batch, a.chunk});
        for (int l = last - 1; l >= first; --l)
          block_backward_weight(config, {}, params[a.chunk].blocks[l - first],
                                grads[a.chunk].blocks[l - first], batch.batch, batch.seq_len,
                                acts->block(l), keep[last - 1 - l]);
      }
    }
    if (options.log) {
      record.end_tick = options.log->tick(), record.end_us = options.log->now_us();
      options.log->record(record);
    }
    if (a.op == Op::kForward && vs < last_stage)
      transfer_out(acts->residual(last), n, (vs + 1) % p, tag_of(shape, a.micro_batch, vs, false));
    if (a.op == Op::kBackward && vs > 0)
      transfer_out(acts->residual_grad(first), n, (vs - 1) % p,
                   tag_of(shape, a.micro_batch, vs - 1, true));
    const bool done = a.op == (schedule.split_backward ? Op::kWeight : Op::kBackward);
    if (done) live.erase({a.micro_batch, a.chunk}), kept.erase({a.micro_batch, a.chunk});
  }
  result.traffic = comm.counters();
  result.traffic.bytes_sent -= before.bytes_sent;
  result.traffic.bytes_received -= before.bytes_received;
  result.traffic.messages_sent -= before.messages_sent;
  result.traffic.messages_received -= before.messages_received;

  // The tied embedding: the first virtual stage added the embedding's use, the last the head's.
  const int head_rank = last_stage % p;
  train::Model<T>& embedding = *chunks.front();  // virtual stage `rank` (0 on rank 0)
  train::Model<T>& head = *chunks.back();        // virtual stage (v−1)·p + rank
  if (p == 1 && shape.chunks > 1) {
    std::span<T> a = embedding.tied_embedding_grad(), b = head.tied_embedding_grad();
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = b[i] = a[i] + b[i];
  } else if (p > 1 && (rank == 0 || rank == head_rank)) {
    std::span<T> mine = rank == 0 ? embedding.tied_embedding_grad() : head.tied_embedding_grad();
    std::vector<T> theirs(mine.size());
    const int other = rank == 0 ? head_rank : 0;
    comm.sendrecv(coll::ConstBuffer(std::span<const T>(mine)), other,
                  coll::Buffer(std::span<T>(theirs)), other, 1 << 29);
    // Both ranks add embedding's + head's in that order, so both hold the same bits.
    for (std::size_t i = 0; i < mine.size(); ++i)
      mine[i] = rank == 0 ? mine[i] + theirs[i] : theirs[i] + mine[i];
  }
  double loss = 0;
  if (rank == head_rank) {
    T sum = 0;
    for (const T l : losses) sum += l;
    loss = static_cast<double>(sum / T(m));
  }
  comm.broadcast(coll::Buffer(std::span<double>(&loss, 1)), head_rank);
  result.loss = loss;
  return result;
}
//! [execute]

//! [execute_data_parallel]
template <typename T>
RankResult execute_data_parallel(coll::ProcessGrid& grid, const Schedule& schedule,
                                 std::span<const std::unique_ptr<train::Model<T>>> chunks,
                                 std::span<const train::Batch> micro_batches,
                                 const ExecuteOptions& options) {
  BOOK_CHECK(grid.degrees().tp == 1,
             "execute_data_parallel: tensor-parallel degree "
                 << grid.degrees().tp
                 << "; this composition runs chapter 4's whole layers (tp = 1)");
  return execute_3d<T>(grid, schedule, chunks, micro_batches, options);  // three_d.cc
}
//! [execute_data_parallel]

template <typename T>
double single_device_step(train::Model<T>& whole, std::span<const train::Batch> micro_batches) {
  BOOK_CHECK(!micro_batches.empty(), "single_device_step: no micro-batches");
  whole.zero_grad();
  const T scale = T(1) / T(micro_batches.size());
  T sum = 0;
  for (const train::Batch& b : micro_batches) sum += train::forward_backward(whole, b, scale);
  return static_cast<double>(sum / T(micro_batches.size()));
}

std::vector<train::Batch> random_micro_batches(const train::Config& config, int m, int batch,
                                               int seq_len, std::uint64_t seed) {
  BOOK_CHECK(m >= 1 && batch >= 1 && seq_len >= 1 && seq_len <= config.context,
             "random_micro_batches: m = " << m << ", batch = " << batch << ", seq_len = " << seq_len
                                          << " (must be positive, seq_len <= context "
                                          << config.context << ")");
  Rng rng(seed);
  std::vector<train::Batch> out(m);
  for (auto& b : out) {
    b.batch = batch, b.seq_len = seq_len;
    for (int i = 0; i < batch * seq_len; ++i) {
      b.tokens.push_back(static_cast<int>(rng.uniform_int(0, config.vocab_size - 1)));
      b.targets.push_back(static_cast<int>(rng.uniform_int(0, config.vocab_size - 1)));
    }
  }
  return out;
}

#define BOOK_PP_INSTANTIATE(T)                                                                \
  template std::vector<std::unique_ptr<train::Model<T>>> make_rank_models<T>(                 \
      const train::Config&, int, const Shape&, const std::vector<int>&, int, std::uint64_t,   \
      const train::TensorParallelSlice&, train::TensorParallelism<T>*);                       \
  template RankResult execute<T>(coll::Communicator&, const Schedule&,                        \
                                 std::span<const std::unique_ptr<train::Model<T>>>,           \
                                 std::span<const train::Batch>, const ExecuteOptions&);       \
  template RankResult execute_data_parallel<T>(                                               \
      coll::ProcessGrid&, const Schedule&, std::span<const std::unique_ptr<train::Model<T>>>, \
      std::span<const train::Batch>, const ExecuteOptions&);                                  \
  template double single_device_step<T>(train::Model<T>&, std::span<const train::Batch>);
BOOK_PP_INSTANTIATE(float)
BOOK_PP_INSTANTIATE(double)

}  // namespace book::pp
