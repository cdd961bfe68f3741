// bazel run //chapters/09_memory_accounting:memory [-- --tour] [--gpu-gib 80]
//
// Chapter 9's stage: (1) the book's model, each memory category of a real training step measured
// by chapter 4's MemoryTracker next to the formula's prediction; (2) the OOM ladder of Llama-2 7B
// on one GPU, one remedy at a time (the calculator), with the book's measured micro-batch step;
// (3) a 7B model's memory by category against sequence length and ZeRO stage (the plot's data);
// (4) MFU against HFU with full recomputation. Also: the OOM ladder on chapter 4's real trainer
// (each remedy a switch, measured against predict_remedies), colocated RL memory, the tiled
// attention, the caching allocator and offload. Tables on stdout, CSV and JSON under results/.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <string>
#include <vector>

#include "chapters/03_collectives/threads.h"
#include "chapters/04_training_baseline/data.h"
#include "chapters/04_training_baseline/layers.h"
#include "chapters/06_zero/zero_trainer.h"
#include "chapters/09_memory_accounting/book_model.h"
#include "chapters/09_memory_accounting/caching_allocator.h"
#include "chapters/09_memory_accounting/calc_cli.h"
#include "chapters/09_memory_accounting/colocated_rl.h"
#include "chapters/09_memory_accounting/flash_attention.h"
#include "chapters/09_memory_accounting/model_states.h"
#include "chapters/09_memory_accounting/offload.h"
#include "chapters/09_memory_accounting/recompute.h"
#include "chapters/09_memory_accounting/trainer_remedies.h"
#include "common/flags.h"
#include "common/machine_load.h"
#include "common/main.h"
#include "common/rng.h"
#include "common/table.h"

namespace {

using namespace book;
using namespace book::mem;

std::string gib(std::uint64_t bytes) { return fixed(static_cast<double>(bytes) / (1u << 30), 2); }

// (1) measured = predicted on chapter 4's Trainer.
Table measured_table(int steps, bool* all_equal) {
  Table t({"precision", "micro-batch", "category", "measured B", "predicted B", "equal"});
  for (DType p : {DType::kF32, DType::kBF16, DType::kF16}) {
    for (int micro_batch : {8, 32}) {
      train::TrainOptions o;
      o.precision = p;
      o.micro_batch = micro_batch;
      const MemorySnapshot measured = measure_trainer_memory(o, steps);
      const MemorySnapshot predicted = predict_trainer_memory(o);
      for (MemoryCategory c : all_memory_categories()) {
        const bool equal = measured[c] == predicted[c];
        *all_equal = *all_equal && equal;
        t.add_row({dtype_name(p), std::to_string(micro_batch), memory_category_name(c),
                   std::to_string(measured[c]), std::to_string(predicted[c]),
                   equal ? "yes" : "NO"});
      }
    }
  }
  return t;
}

// (1b) ZeRO stages 0-2 on chapter 6's trainer (thread ranks, one bucket, BF16): the largest rank's
// model state against the calculator's zero_model_states for the same shape on a DP = N grid.
Table zero_table(bool* all_equal) {
  Table t({"stage", "N", "measured B (params/grads/master/optimizer)", "predicted B", "equal"});
  train::TrainOptions o;
  o.precision = DType::kBF16;
  o.micro_batch = 12;
  for (zero::Stage stage : {zero::Stage::kDdp, zero::Stage::kZero1, zero::Stage::kZero2}) {
    for (int n : {2, 4}) {
      zero::ZeroOptions options;
      options.train = o;
      options.stage = stage;
      options.bucket_bytes = std::size_t{1} << 30;  // one bucket: the largest rank owns ⌈Ψ/N⌉
      std::vector<zero::ModelStateBytes> measured(static_cast<std::size_t>(n));
      coll::run_ranks(n, [&](coll::Communicator& comm) {
        MemoryTracker tracker;
        zero::ZeroTrainer trainer(comm, options, &tracker);
        trainer.step();
        measured[static_cast<std::size_t>(comm.rank())] = trainer.measured_model_state();
      });
      zero::ModelStateBytes largest;
      for (const zero::ModelStateBytes& m : measured)
        if (m.total() > largest.total()) largest = m;
      Parallelism par;
      par.dp = n;
      par.stage = stage;
      const zero::ModelStateBytes predicted = zero_model_states(preset("book"), par, o.precision);
      const auto cells = [](const zero::ModelStateBytes& b) {
        return std::to_string(b.parameters) + "/" + std::to_string(b.gradients) + "/" +
               std::to_string(b.master_weights) + "/" + std::to_string(b.optimizer_states);
      };
      *all_equal = *all_equal && largest == predicted;
      t.add_row({zero::stage_name(stage), std::to_string(n), cells(largest), cells(predicted),
                 largest == predicted ? "yes" : "NO"});
    }
  }
  return t;
}

// Recomputation on chapter 4's blocks: a 4-block model, micro-batch 32, stored activations
// against the checkpointed backward with one block per segment; the gradients compared bit for bit.
struct RecomputeResult {
  std::size_t stored = 0, held = 0;
  bool gradients_equal = false;
};

RecomputeResult measure_recompute() {
  train::Config c;
  const train::AdditionTask task(3);
  c.vocab_size = train::AdditionTask::vocab_size();
  c.context = task.model_context();
  c.n_layer = 4;
  const int batch = 32;
  train::Model<float> model(c, batch);
  model.init(9);
  Rng rng(2);
  const train::Batch data = task.batch(rng, train::Split::kTrain, batch);
  model.forward(data.tokens.data(), data.targets.data(), batch, data.seq_len);
  model.backward();
  const std::vector<float> stored_grads(model.grads().begin(), model.grads().end());
  MemoryTracker tracker;
  RecomputeBuffers buffers(c, 1, batch, &tracker);
  model.zero_grad();
  model.forward(data.tokens.data(), data.targets.data(), batch, data.seq_len);
  checkpointed_backward(model, buffers);
  RecomputeResult r;
  r.stored = c.n_layer * train::BlockActivations<float>(c, {}, batch, c.context).bytes();
  r.held = tracker.peak(MemoryCategory::kActivations);
  r.gradients_equal = std::equal(stored_grads.begin(), stored_grads.end(), model.grads().begin());
  return r;
}

// Tiled attention against chapter 4's: the bytes each holds through forward + backward (a
// tracker), and the largest difference of out and dqkv. Chapter 4 keeps att [B, H, T, T] for its
// backward; the tiled one keeps lse [B, H, T] and its scratch.
struct FlashResult {
  FlashShape shape;
  std::size_t naive = 0, tiled = 0;
  double max_diff = 0;
};

//! [flash_measure]
FlashResult measure_flash(const FlashShape& s) {
  const std::size_t tokens = static_cast<std::size_t>(s.batch) * s.seq_len;
  const std::size_t width = static_cast<std::size_t>(s.n_head) * s.head_size;
  Rng rng(7);
  std::vector<float> qkv(tokens * 3 * width), dout(tokens * width);
  for (float& x : qkv) x = static_cast<float>(rng.uniform(-1, 1));
  for (float& x : dout) x = static_cast<float>(rng.uniform(-1, 1));
  std::vector<float> out_naive(tokens * width), out_tiled(tokens * width);
  std::vector<float> d_naive(tokens * 3 * width), d_tiled(tokens * 3 * width);
  FlashResult r{s};
  {
    MemoryTracker tracker;
    TrackedBuffer<float> att(s.rows() * s.seq_len, MemoryCategory::kActivations, &tracker);
    train::attention_forward(qkv.data(), s.batch, s.seq_len, s.n_head, s.head_size, att.data(),
                             out_naive.data());
    train::attention_backward(dout.data(), qkv.data(), att.data(), s.batch, s.seq_len, s.n_head,
                              s.head_size, d_naive.data());
    r.naive = tracker.peak_total();
  }
  MemoryTracker tracker;
  TrackedBuffer<float> lse(s.rows(), MemoryCategory::kActivations, &tracker);
  flash_attention_forward(qkv.data(), s, out_tiled.data(), lse.data(), &tracker);
  flash_attention_backward(dout.data(), qkv.data(), out_tiled.data(), lse.data(), s, d_tiled.data(),
                           &tracker);
  r.tiled = tracker.peak_total();
  for (std::size_t i = 0; i < out_naive.size(); ++i)
    r.max_diff = std::max(r.max_diff, static_cast<double>(std::abs(out_naive[i] - out_tiled[i])));
  for (std::size_t i = 0; i < d_naive.size(); ++i)
    r.max_diff = std::max(r.max_diff, static_cast<double>(std::abs(d_naive[i] - d_tiled[i])));
  return r;
}
//! [flash_measure]

Table flash_table(std::vector<FlashResult>* results) {
  Table t({"B", "T", "heads", "head size", "tile", "chapter 4 (att B·H·T·T) B",
           "tiled (lse + scratch) B", "ratio", "max abs diff out, dqkv"});
  // The book's model at micro-batch 32, then one long sequence of the same heads.
  for (const FlashShape& s : {FlashShape{32, 10, 4, 16, 16}, FlashShape{1, 1024, 4, 16, 64},
                              FlashShape{1, 2048, 4, 16, 64}}) {
    const FlashResult r = measure_flash(s);
    results->push_back(r);
    t.add_row({std::to_string(s.batch), std::to_string(s.seq_len), std::to_string(s.n_head),
               std::to_string(s.head_size), std::to_string(s.tile), std::to_string(r.naive),
               std::to_string(r.tiled),
               fixed(static_cast<double>(r.naive) / static_cast<double>(r.tiled), 1),
               fixed(r.max_diff * 1e6, 2) + "e-6"});
  }
  return t;
}

// The caching allocator replaying a real trainer's allocations: chapter 4's Trainer built and
// stepped twice with the tracker's event log on, then the log replayed through the simulator with
// and without expandable segments.
struct AllocatorRun {
  std::string model;
  std::size_t events = 0;
  ReplayReport standard, expandable;
};

//! [allocator_replay]
AllocatorRun replay_trainer(const std::string& name, const train::TrainOptions& options) {
  MemoryTracker tracker;
  tracker.record_events(true);
  {
    train::Trainer trainer(options, &tracker);
    trainer.step();
    trainer.step();
  }
  const std::vector<MemoryEvent> events = tracker.events();
  return {name, events.size(), replay(events), replay(events, {.expandable_segments = true})};
}
//! [allocator_replay]

std::vector<AllocatorRun> allocator_runs() {
  train::TrainOptions book_model;
  book_model.precision = DType::kBF16;
  book_model.micro_batch = 32;
  train::TrainOptions wider = book_model;  // a model whose buffers reach the large pool
  wider.model.d_model = 256;
  wider.model.n_layer = 4;
  wider.model.n_head = 8;
  return {replay_trainer("book model (d 64, 2 layers)", book_model),
          replay_trainer("wider (d 256, 4 layers)", wider)};
}

Table allocator_table(const std::vector<AllocatorRun>& runs) {
  Table t({"model (bf16, mb 32, 2 steps)", "allocator", "events", "peak requested B",
           "peak allocated B", "peak reserved B", "reserved / requested", "unused at peak",
           "segments at end", "device calls"});
  for (const AllocatorRun& run : runs)
    for (const auto& [variant, r] :
         {std::pair{"default", &run.standard}, std::pair{"expandable", &run.expandable}})
      t.add_row({run.model, variant, std::to_string(run.events), std::to_string(r->peak_requested),
                 std::to_string(r->peak_allocated), std::to_string(r->at_peak_reserved.reserved),
                 fixed(static_cast<double>(r->at_peak_reserved.reserved) /
                           static_cast<double>(r->peak_requested),
                       3),
                 fixed(100 * r->fragmentation_at_peak(), 1) + "%", std::to_string(r->segments),
                 std::to_string(r->device_calls)});
  return t;
}

// The timeline the picture draws: bytes after every event, both variants.
Table allocator_timeline(const AllocatorRun& run) {
  Table t({"event", "requested", "allocated", "reserved", "reserved_expandable"});
  for (std::size_t i = 0; i < run.standard.timeline.size(); ++i) {
    const AllocatorSample& a = run.standard.timeline[i];
    t.add_row({std::to_string(i), std::to_string(a.bytes.requested),
               std::to_string(a.bytes.allocated), std::to_string(a.bytes.reserved),
               std::to_string(run.expandable.timeline[i].bytes.reserved)});
  }
  return t;
}

struct Rung {
  std::string remedy;
  Setup setup;
  bool offload = false;  // the optimizer states (master, m, v) live in host memory
};

// Offload measured on the book model's Ψ: a device arena of 8 B/param refuses the full
// mixed-precision state and holds the offloaded one; the bytes moved per step counted.
struct OffloadResult {
  std::size_t psi = 0, device_without = 0, device_with = 0, host_with = 0, moved_per_step = 0;
  std::string refused;
};

OffloadResult measure_offload() {
  train::Config c;
  const train::AdditionTask task(3);
  c.vocab_size = train::AdditionTask::vocab_size();
  c.context = task.model_context();
  OffloadResult r;
  r.psi = static_cast<std::size_t>(c.parameter_count());
  const std::vector<float> init(r.psi, 0.01f);
  {
    BudgetedArena device("device", std::size_t{1} << 30), host("host", std::size_t{1} << 30);
    OffloadedAdamW adam(init, device, host, false);
    adam.step(1e-3f);
    r.device_without = device.tracker().peak_total();
  }
  try {
    BudgetedArena device("device", 8 * r.psi), host("host", std::size_t{1} << 30);
    OffloadedAdamW adam(init, device, host, false);
  } catch (const Error& e) {
    r.refused = e.what();
  }
  BudgetedArena device("device", 8 * r.psi), host("host", std::size_t{1} << 30);
  OffloadedAdamW adam(init, device, host, true);
  adam.step(1e-3f);
  r.device_with = device.tracker().peak_total();
  r.host_with = host.tracker().peak_total();
  r.moved_per_step = adam.moved().to_host + adam.moved().to_device;
  return r;
}

// (1c) The OOM ladder on chapter 4's real Trainer: each remedy a switch (trainer_remedies.h),
// applied cumulatively in the order an engineer tries them; the tracker's peak against
// predict_remedies, the host's bytes, the link's bytes per step and the loss after the steps.
struct RealRung {
  std::string name;
  train::TrainOptions options;
  Remedies remedies;
  RemedyMeasurement measured;
  RemedyPrediction predicted;
};

//! [real_ladder]
std::vector<RealRung> real_ladder(int digits, int steps) {
  train::TrainOptions o;
  o.precision = DType::kBF16;
  o.digits = digits;
  o.micro_batch = 32;
  Remedies r;
  std::vector<RealRung> rungs;
  const auto rung = [&](std::string name) {
    rungs.push_back({std::move(name), o, r, measure_remedies(o, r, steps), predict_remedies(o, r)});
  };
  rung("baseline: micro-batch 32");
  o.micro_batch = 8;
  o.accumulation = 4;
  rung("micro-batch 8 x 4 accumulation");
  r.recompute = train::Recomputation::kSelective;
  rung("+ selective recomputation");
  r.recompute = train::Recomputation::kFull;
  rung("+ full recomputation");
  r.offload = true;
  rung("+ optimizer state offloaded to host");
  r.adam_8bit = true;
  rung("+ 8-bit Adam states");
  r.tiled_attention = true;
  rung("+ tiled attention");
  return rungs;
}
//! [real_ladder]

Table real_ladder_table(const std::vector<RealRung>& rungs, bool* all_equal) {
  Table t({"remedy (cumulative)", "context", "device peak B", "predicted B", "equal",
           "activations B", "optimizer + master B", "host B", "moved B/step", "final loss",
           "ms/step"});
  for (const RealRung& r : rungs) {
    const std::size_t predicted = r.predicted.device.total();
    const bool equal = r.measured.device_peak == predicted;
    *all_equal = *all_equal && equal;
    const std::size_t moved = (r.measured.moved.to_host + r.measured.moved.to_device) /
                              static_cast<std::size_t>(r.measured.losses.size());
    t.add_row({r.name, std::to_string(train::AdditionTask(r.options.digits).model_context()),
               std::to_string(r.measured.device_peak), std::to_string(predicted),
               equal ? "yes" : "NO",
               std::to_string(r.measured.device[MemoryCategory::kActivations]),
               std::to_string(r.measured.device[MemoryCategory::kOptimizerStates] +
                              r.measured.device[MemoryCategory::kMasterWeights]),
               std::to_string(r.measured.host.total()), std::to_string(moved),
               fixed(r.measured.losses.back(), 4), fixed(1e3 * r.measured.seconds_per_step, 2)});
  }
  return t;
}

// (2) Llama-2 7B at 4k tokens on one GPU: every remedy in the order an engineer tries them.
std::vector<Rung> ladder() {
  Setup s;
  s.shape = preset("llama2-7b");
  s.seq = 4096;
  s.micro_batch = 8;
  s.overhead_bytes = std::uint64_t{1} << 30;
  std::vector<Rung> rungs{{"baseline: bf16 + Adam, micro-batch 8, 1 GPU", s}};
  s.micro_batch = 1;
  rungs.push_back({"micro-batch 1 (+ 8 accumulation steps: same global batch)", s});
  s.recompute = Recompute::kSelective;
  rungs.push_back({"+ selective recomputation", s});
  // FlashAttention never stores the s² scores: the calculator prices it as selective
  // recomputation (the 5as/h term gone), without the lse's 4·a·s bytes per layer (under 0.1% of the
  // activations).
  rungs.push_back({"or instead: tiled (Flash) attention, no recomputation", s});
  s.recompute = Recompute::kFull;
  rungs.push_back({"+ full recomputation", s});
  s.parallel.dp = 8;
  s.parallel.stage = zero::Stage::kZero1;
  rungs.push_back({"+ ZeRO-1 over 8 GPUs", s});
  s.parallel.stage = zero::Stage::kZero3;
  rungs.push_back({"+ ZeRO-3 over 8 GPUs", s});
  s.parallel.dp = 1;
  s.parallel.stage = zero::Stage::kDdp;
  rungs.push_back({"instead of ZeRO: optimizer states offloaded to host, 1 GPU", s, true});
  s.optimizer = Optimizer::kAdam8bit;
  rungs.push_back({"instead of ZeRO: 8-bit Adam on 1 GPU (full recomputation)", s});
  return rungs;
}

Table ladder_table(const std::vector<Rung>& rungs, double gpu_gib) {
  Table t({"remedy", "params", "grads", "optimizer", "activations", "comm", "overhead", "total GiB",
           "fits"});
  for (const Rung& r : rungs) {
    Breakdown b = calculate(r.setup);
    if (r.offload) b.master_weights = b.optimizer_moments = 0;  // in host memory
    t.add_row({r.remedy, gib(b.parameters), gib(b.gradients), gib(b.optimizer_states()),
               gib(b.activations), gib(b.communication), gib(b.overhead), gib(b.total()),
               static_cast<double>(b.total()) <= gpu_gib * (1u << 30) ? "yes" : "no"});
  }
  return t;
}

// (2b) Colocated RL on 8 GPUs of 80 GiB: Llama-2 7B trained with ZeRO-3 over 8 (the ladder's
// last ZeRO rung), rollouts by an engine with the whole BF16 model on every GPU and a paged KV
// pool (chapter 10's 2·L·H_kv·D·2 bytes per token, 16-token blocks).
struct RlRun {
  RlMemorySetup setup;
  std::int64_t blocks[2] = {0, 0};  // the largest pool: colocated, time-sliced
  RlPlan plans[2];                  // each with its own largest pool
  std::string refused;              // colocated with the time-sliced pool
};

constexpr std::uint64_t kRlOverhead = std::uint64_t{1} << 30;  // CUDA context, workspaces

//! [rl_setup]
RlMemorySetup rl_setup(double gpu_gib) {
  Setup train;
  train.shape = preset("llama2-7b");
  train.seq = 4096;
  train.micro_batch = 1;
  train.recompute = Recompute::kFull;
  train.parallel.dp = 8;
  train.parallel.stage = zero::Stage::kZero3;
  train.overhead_bytes = kRlOverhead;
  const Breakdown b = calculate(train);
  const ModelShape& m = train.shape;
  RlMemorySetup s;
  const std::uint64_t gpu = static_cast<std::uint64_t>(gpu_gib * (1u << 30));
  s.budget = gpu > b.overhead ? gpu - b.overhead : 0;
  s.training_state = b.parameters + b.gradients + b.optimizer_states();  // 16 B/param / 8
  s.training_activations = b.activations + b.communication;  // and ZeRO-3's gathered layers
  s.inference_weights = 2 * static_cast<std::uint64_t>(parameters_of(m).total);
  s.kv_bytes_per_token =
      2ull * m.n_layer * m.n_kv_head * (m.d_model / m.n_head) * 2;  // K and V, BF16
  s.block_size = 16;
  //! [rl_setup]
  return s;
}

// Refuses, before minutes of measuring, a --gpu-gib too small for the colocated placement's one
// KV block (its ledger would fail at the end, not naming the flag).
void check_gpu_holds_rl(double gpu_gib) {
  const RlMemorySetup s = rl_setup(gpu_gib);
  const std::uint64_t smallest = smallest_budget(s, RlPlacement::kColocated);
  const std::uint64_t gib = std::uint64_t{1} << 30;
  BOOK_CHECK(s.budget >= smallest,
             "--gpu-gib " << gpu_gib << " is too small for the colocated RL table: Llama-2 7B's "
                          << "ZeRO-3 training state, its activations and the engine's weights "
                          << "leave no room for one KV block; use --gpu-gib "
                          << (smallest + kRlOverhead + gib - 1) / gib << " or more");
}

RlRun colocated_rl(double gpu_gib) {
  RlRun run;
  run.setup = rl_setup(gpu_gib);
  const RlMemorySetup& s = run.setup;
  for (int i = 0; i < 2; ++i) {
    const RlPlacement p = i == 0 ? RlPlacement::kColocated : RlPlacement::kTimeSliced;
    run.blocks[i] = max_kv_blocks(s, p);
    RlMemorySetup with = s;
    with.kv_blocks = run.blocks[i];
    run.plans[i] = run_rl_memory(with, p, 2);
  }
  RlMemorySetup big = s;
  big.kv_blocks = run.blocks[1];
  try {
    run_rl_memory(big, RlPlacement::kColocated, 2);
  } catch (const Error& e) {
    run.refused = e.what();
  }
  return run;
}

Table rl_table(const RlRun& run) {
  Table t({"placement", "phase", "training state GiB", "training activations GiB",
           "inference weights GiB", "KV pool GiB", "GPU total GiB", "host GiB"});
  for (const RlPlan& plan : run.plans)
    for (const RlPhase& phase : plan.phases) {
      const auto held = [&](const char* what) {
        const auto it = phase.device.find(what);
        return gib(it == phase.device.end() ? 0 : it->second);
      };
      t.add_row({rl_placement_name(plan.placement), phase.name, held("training state"),
                 held("training activations"), held("inference weights"), held("KV pool"),
                 gib(phase.device_total), gib(phase.host_total)});
    }
  return t;
}

// (3) a 7B model by category vs sequence length (1 GPU, micro-batch 1) and vs ZeRO stage (8 GPUs,
// selective recomputation).
Table sweep_table() {
  Table t({"sweep", "x", "parameters", "gradients", "optimizer_states", "activations",
           "communication", "total"});
  Setup s;
  s.shape = preset("llama2-7b");
  const auto add = [&](const std::string& sweep, const std::string& x) {
    const Breakdown b = calculate(s);
    t.add_row({sweep, x, gib(b.parameters), gib(b.gradients), gib(b.optimizer_states()),
               gib(b.activations), gib(b.communication), gib(b.total())});
  };
  for (std::int64_t seq : {1024, 2048, 4096, 8192, 16384, 32768}) {
    s.seq = seq;
    add("seq", std::to_string(seq));
  }
  s.seq = 4096;
  s.parallel.dp = 8;
  s.recompute = Recompute::kSelective;
  for (zero::Stage z :
       {zero::Stage::kDdp, zero::Stage::kZero1, zero::Stage::kZero2, zero::Stage::kZero3}) {
    s.parallel.stage = z;
    add("zero", zero::stage_name(z));
  }
  return t;
}

Table flops_table() {
  Table t(
      {"model", "recompute", "model FLOPs/token (MFU)", "hardware FLOPs/token (HFU)", "HFU/MFU"});
  for (const char* name : {"llama2-7b", "gpt3-175b"}) {
    const ParameterBreakdown p = parameters_of(preset(name));
    const double n = static_cast<double>(p.total - p.embedding);  // matmul parameters
    for (Recompute r : {Recompute::kNone, Recompute::kSelective, Recompute::kFull}) {
      const double mfu = model_flops_per_token(n), hfu = hardware_flops_per_token(n, r);
      t.add_row({name, recompute_name(r), fixed(mfu / 1e9, 1) + "e9", fixed(hfu / 1e9, 1) + "e9",
                 fixed(hfu / mfu, 3)});
    }
  }
  return t;
}

int body(int argc, char** argv) {
  bool tour = false;
  double gpu_gib = 80;
  int steps = 1;
  Flags flags("memory", "chapter 9: training memory measured, predicted, and cut");
  flags.add("tour", &tour, "print the chapter's headline lines for //:tour");
  flags.add("gpu-gib", &gpu_gib, "the GPU's memory for the ladder's 'fits' column").range(1, 4096);
  flags.add("steps", &steps, "training steps per measured configuration").range(1, 100);
  flags.parse(argc, argv);
  check_gpu_holds_rl(gpu_gib);
  print_machine_load();
  if (tour)
    std::cout << "tour-config: 09 | memory --tour: the chapter's run (6 one-step trainings of the "
                 "book's model, 6 one-step ZeRO runs on 2 and 4 thread ranks, a recomputed "
                 "backward, tiled vs chapter 4's attention at T = 10, 1024, 2048, two trainers' "
                 "allocation logs replayed through the caching-allocator simulator, 14 three-step "
                 "trainings of the OOM ladder on chapter 4's trainer, the colocated-RL ledger, "
                 "formulas for "
                 "the rest); the same as without "
                 "--tour\n";

  std::cout << "# Chapter 9: where training memory goes\n\n## Measured = predicted: chapter 4's "
               "Trainer, one step, peak bytes per category\n\n";
  std::cerr << "memory: measuring 6 configurations of the book's model ...\n";
  bool all_equal = true;
  const Table measured = measured_table(steps, &all_equal);
  std::cout << measured.markdown() << "\n";

  // Gradient accumulation on the real trainer: micro-batch 32 vs 8 x 4 (same tokens per step).
  train::TrainOptions big, small;
  big.precision = small.precision = DType::kBF16;
  big.micro_batch = 32;
  small.micro_batch = 8;
  small.accumulation = 4;
  const MemorySnapshot m_big = measure_trainer_memory(big), m_small = measure_trainer_memory(small);
  std::cout << "measured, book model bf16: micro-batch 32 x 1 -> 8 x 4 (accumulation): "
            << "activations " << m_big[MemoryCategory::kActivations] << " -> "
            << m_small[MemoryCategory::kActivations] << " B, peak total " << m_big.total() << " -> "
            << m_small.total() << " B\n\n";

  std::cerr << "memory: chapter 6's ZeRO trainer at N = 2, 4 ...\n";
  bool zero_equal = true;
  const Table zero_measured = zero_table(&zero_equal);
  std::cout << "## Measured = predicted across ZeRO stages: chapter 6's trainer, BF16, largest "
               "rank\n\n"
            << zero_measured.markdown() << "\n";

  std::cerr << "memory: tiled attention against chapter 4's ...\n";
  std::vector<FlashResult> flash;
  const Table flash_t = flash_table(&flash);
  std::cout << "## Tiled (FlashAttention-style) attention: bytes held through forward + backward, "
               "float, against chapter 4's\n\n"
            << flash_t.markdown() << "\n";

  std::cerr << "memory: the caching allocator replaying two trainers' allocations ...\n";
  const std::vector<AllocatorRun> runs = allocator_runs();
  const Table alloc_t = allocator_table(runs);
  std::cout << "## Caching allocator (PyTorch's rules, simulated) replaying a real trainer's "
               "allocations\n\n"
            << alloc_t.markdown() << "\n";

  const OffloadResult off = measure_offload();
  std::cout << "measured, book model (psi = " << off.psi
            << ") bf16 AdamW, device arena budget 8 B/param: optimizer states on the device "
            << off.device_without << " B (refused: " << off.refused << "); offloaded: device "
            << off.device_with << " B, host " << off.host_with << " B, moved per step "
            << off.moved_per_step << " B\n\n";

  const RecomputeResult rec = measure_recompute();
  std::cout << "measured, 4-block book model, micro-batch 32: the blocks' activations stored "
            << rec.stored << " B -> recomputed (1 block per segment) " << rec.held
            << " B; gradients bit for bit: " << (rec.gradients_equal ? "yes" : "NO") << "\n\n";

  std::cerr << "memory: the OOM ladder on chapter 4's real trainer (7 rungs x 2 contexts) ...\n";
  bool real_equal = true;
  std::vector<RealRung> real = real_ladder(3, steps + 2);
  const std::vector<RealRung> real_long = real_ladder(6, steps + 2);
  real.insert(real.end(), real_long.begin(), real_long.end());
  const Table real_t = real_ladder_table(real, &real_equal);
  std::cout << "## The OOM ladder on the real trainer: chapter 4's Trainer, bf16, remedies "
               "switched on one after another ("
            << steps + 2
            << " steps; ms/step is wall time on a shared machine, not a measurement)\n\n"
            << real_t.markdown() << "\n";

  const std::vector<Rung> rungs = ladder();
  const Table lad = ladder_table(rungs, gpu_gib);
  std::cout << "## The OOM ladder: Llama-2 7B, seq 4096, bf16, one " << gpu_gib
            << " GiB GPU (calculator)\n\n"
            << lad.markdown() << "\n";
  const RlRun rl = colocated_rl(gpu_gib);
  const Table rl_t = rl_table(rl);
  const std::uint64_t per_block = rl.setup.block_size * rl.setup.kv_bytes_per_token;
  std::cout << "## Colocated RL: Llama-2 7B, ZeRO-3 training over 8 GPUs + a full-model engine, "
               "one "
            << gpu_gib << " GiB GPU (budget " << rl.setup.budget << " B after 1 GiB overhead)\n\n"
            << rl_t.markdown() << "\n";
  for (int i = 0; i < 2; ++i)
    std::cout << "rl: " << rl_placement_name(rl.plans[i].placement) << ": largest KV pool "
              << rl.blocks[i] << " blocks = " << rl.blocks[i] * rl.setup.block_size
              << " tokens in flight (" << gib(rl.blocks[i] * per_block) << " GiB); GPU peak "
              << rl.plans[i].device_peak << " B (" << gib(rl.plans[i].device_peak)
              << " GiB); moved to host and back per cycle " << rl.plans[i].moved_per_cycle
              << " B; engine weight sync per cycle " << rl.plans[i].sync_per_cycle << " B\n";
  std::cout << "rl: colocated with the time-sliced pool: " << rl.refused << "\n\n";

  const Table sweep = sweep_table();
  std::cout << "## Llama-2 7B by category (GiB): seq sweep (1 GPU, micro-batch 1) and ZeRO stage "
               "(8 GPUs, seq 4096, selective recomputation)\n\n"
            << sweep.markdown() << "\n";
  const Table flops = flops_table();
  std::cout << "## MFU vs HFU\n\n" << flops.markdown() << "\n";

  const std::string dir = results_dir();
  measured.write_csv(dir + "/ch09_measured.csv");
  measured.write_json(dir + "/ch09_measured.json");
  zero_measured.write_csv(dir + "/ch09_zero.csv");
  lad.write_csv(dir + "/ch09_ladder.csv");
  real_t.write_csv(dir + "/ch09_real_ladder.csv");
  rl_t.write_csv(dir + "/ch09_colocated_rl.csv");
  real_t.write_json(dir + "/ch09_real_ladder.json");
  lad.write_json(dir + "/ch09_ladder.json");
  sweep.write_csv(dir + "/ch09_sweep.csv");
  sweep.write_json(dir + "/ch09_sweep.json");
  flops.write_csv(dir + "/ch09_flops.csv");
  flash_t.write_csv(dir + "/ch09_flash.csv");
  alloc_t.write_csv(dir + "/ch09_allocator.csv");
  allocator_timeline(runs.back()).write_csv(dir + "/ch09_allocator_timeline.csv");
  std::cout
      << "wrote " << dir
      << "/ch09_{measured,ladder,real_ladder,sweep}.{csv,json}, ch09_zero.csv, ch09_flops.csv, "
         "ch09_flash.csv\n";

  if (tour) {
    const Breakdown first = calculate(rungs.front().setup), last = calculate(rungs[6].setup);
    std::cout << "tour: 09 | book model, one step: measured vs predicted bytes, 7 categories x "
                 "{f32,bf16,f16} x micro-batch {8,32} | equal: "
              << (all_equal ? "yes" : "NO")
              << " | the inventory is complete: 16 B/param + activations + workspace\n";
    std::cout
        << "tour: 09 | chapter 6's ZeRO trainer, stages 0-2 x N = 2, 4 (bf16): largest rank's "
           "model state vs calculator | equal: "
        << (zero_equal ? "yes" : "NO")
        << " | the calculator's per-rank formula is the trainer's, byte for byte\n";
    std::cout << "tour: 09 | book model bf16, micro-batch 32 -> 8 x 4 accumulation | activations "
              << m_big[MemoryCategory::kActivations] << " -> "
              << m_small[MemoryCategory::kActivations]
              << " B | gradient accumulation cuts activations by the micro-batch ratio\n";
    std::cout << "tour: 09 | 4-block model, blocks' activations stored -> full recomputation | "
              << rec.stored << " -> " << rec.held
              << " B, gradients equal: " << (rec.gradients_equal ? "yes" : "NO")
              << " | recomputation trades one extra forward (8N vs 6N FLOPs) for activations\n";
    std::cout << "tour: 09 | attention T = " << flash.back().shape.seq_len
              << ", 4 heads: chapter 4's T x T probabilities -> tiled (lse + one tile) | "
              << flash.back().naive << " -> " << flash.back().tiled << " B, max |diff| "
              << flash.back().max_diff
              << " | FlashAttention never materialises T x T (Dao 2022), same outputs and grads\n";
    std::cout << "tour: 09 | chapter 4's Trainer bf16 (context "
              << train::AdditionTask(real_long.front().options.digits).model_context()
              << "), remedies switched on cumulatively: baseline -> all six | "
              << real_long.front().measured.device_peak << " -> "
              << real_long.back().measured.device_peak
              << " B device peak, measured = predicted on every rung: "
              << (real_equal ? "yes" : "NO")
              << " | each remedy is a switch of the real trainer, its saving exact\n";
    std::cout << "tour: 09 | colocated RL, Llama-2 7B (ZeRO-3 x8 training + full-model engine), "
                 "80 GiB GPU: largest KV pool, colocated -> time-sliced | "
              << rl.blocks[0] * rl.setup.block_size << " -> " << rl.blocks[1] * rl.setup.block_size
              << " tokens, at " << gib(rl.plans[1].moved_per_cycle)
              << " GiB moved per cycle | time-slicing gives rollouts the training state's memory\n";
    const AllocatorRun& wide = runs.back();
    std::cout << "tour: 09 | caching allocator replaying the wider trainer's 2 steps: peak "
                 "allocated vs reserved, default -> expandable segments | "
              << wide.standard.peak_allocated << " vs " << wide.standard.at_peak_reserved.reserved
              << " -> " << wide.expandable.at_peak_reserved.reserved
              << " B | cached blocks and 20 MiB segments hold memory no tensor uses\n";
    std::cout << "tour: 09 | book model bf16 AdamW, device budget 8 B/param: state on device -> "
                 "optimizer states offloaded to host | "
              << off.device_without << " B (refused) -> " << off.device_with << " B, "
              << off.moved_per_step << " B moved per step"
              << " | offload trades 4 B/param of traffic per step for 12 B/param of memory\n";
    std::cout << "tour: 09 | Llama-2 7B seq 4096: baseline mb 8 -> mb 1 + full recompute + "
                 "ZeRO-3 x8 | "
              << gib(first.total()) << " -> " << gib(last.total())
              << " GiB per GPU | the OOM ladder (calculator, Korthikanti 2022 + ZeRO)\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return book::run_main(argc, argv, body); }
