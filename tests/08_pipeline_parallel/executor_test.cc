// Scaffolding tests of the executor: every schedule, run for real on p thread ranks over chapter
// 4's model parts (double precision), gives the single-device step's loss (bit-identical) and
// gradients (bit-identical; the tied embedding, summed in another order, to 1e-12 relative); no
// action starts before its dependency ended (the shared clock's ticks); each rank holds the
// activations the schedule predicts; and b·s·h elements cross each boundary per micro-batch
// each way, counted.
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "chapters/03_collectives/process_grid.h"
#include "chapters/03_collectives/threads.h"
#include "chapters/04_training_baseline/parameter_copy.h"
#include "chapters/08_pipeline_parallel/executor.h"
#include "chapters/08_pipeline_parallel/partition.h"
#include "chapters/08_pipeline_parallel/registry.h"
#include "common/testing/expect_error.h"

namespace book::pp {
namespace {

train::Config small_config() {
  train::Config c;
  c.vocab_size = 13, c.context = 7, c.n_layer = 4, c.n_head = 2, c.d_model = 8;
  return c;
}

struct Case {
  std::string schedule;
  Shape shape;
};

void run_case(const Case& c) {
  SCOPED_TRACE(c.schedule + " p = " + std::to_string(c.shape.stages) + " m = " +
               std::to_string(c.shape.micro_batches) + " v = " + std::to_string(c.shape.chunks));
  const train::Config config = small_config();
  const int batch = 2, seq_len = 5;
  const auto micro = random_micro_batches(config, c.shape.micro_batches, batch, seq_len, 41);
  train::Model<double> whole(config, batch);
  whole.init(42);
  const double want_loss = single_device_step(whole, micro);

  const Schedule schedule = make_schedule(c.schedule, c.shape);
  const std::vector<int> cuts = even_boundaries(config.n_layer, c.shape.virtual_stages());
  const std::vector<int> predicted = peak_in_flight(schedule);
  ExecutionLog log;
  std::mutex mutex;
  std::vector<double> assembled(whole.layout().total(), std::numeric_limits<double>::quiet_NaN());
  std::vector<RankResult> results(c.shape.stages);
  coll::run_ranks(c.shape.stages, [&](coll::Communicator& comm) {
    auto chunks = make_rank_models<double>(config, batch, c.shape, cuts, comm.rank(), 42);
    const RankResult r = execute<double>(comm, schedule, chunks, micro, {nullptr, &log});
    const std::lock_guard<std::mutex> lock(mutex);
    results[comm.rank()] = r;
    for (const auto& chunk : chunks)
      train::copy_to_whole<double>(chunk->layout(), chunk->grads().span(), whole.layout(),
                                   assembled);
  });

  const double elem_bytes = sizeof(double);
  const std::uint64_t per_message =
      static_cast<std::uint64_t>(batch) * seq_len * config.d_model * elem_bytes;
  const int p = c.shape.stages, m = c.shape.micro_batches, v = c.shape.chunks;
  for (int r = 0; r < p; ++r) {
    EXPECT_EQ(results[r].loss, want_loss) << "rank " << r << ": the loss must be bit-identical";
    EXPECT_EQ(results[r].peak_activations, predicted[r]) << "rank " << r;
    if (v == 1) {
      // b·s·h elements forward to the next stage and back to the one before, per micro-batch.
      const std::uint64_t sends = (r < p - 1 ? m : 0) + (r > 0 ? m : 0);
      EXPECT_EQ(results[r].traffic.bytes_sent, sends * per_message) << "rank " << r;
      EXPECT_EQ(results[r].traffic.bytes_received, sends * per_message) << "rank " << r;
    }
  }
  std::uint64_t messages = 0, bytes = 0;
  for (const auto& r : results) messages += r.traffic.messages_sent, bytes += r.traffic.bytes_sent;
  const std::uint64_t want_messages = p > 1 ? boundary_messages(c.shape) : 0;
  EXPECT_EQ(messages, want_messages);
  EXPECT_EQ(bytes, want_messages * per_message);

  for (const auto& slot : whole.layout().slots())
    for (std::size_t i = slot.offset; i < slot.offset + slot.size(); ++i) {
      const double want = whole.grads()[i], got = assembled[i];
      if (slot.name == "wte")
        ASSERT_NEAR(got, want, 1e-12 * std::max(1.0, std::fabs(want))) << slot.name << " " << i;
      else
        ASSERT_EQ(got, want) << slot.name << "[" << i - slot.offset << "]";
    }

  // No action began before the action it depends on had ended (ticks of one shared clock).
  const auto executed = log.actions();
  ASSERT_EQ(executed.size(), [&] {
    std::size_t n = 0;
    for (const auto& a : schedule.ranks) n += a.size();
    return n;
  }());
  for (const ExecutedAction& a : executed) {
    EXPECT_LT(a.start_tick, a.end_tick);
    const auto dep = dependency_of(c.shape, a.rank, a.action);
    if (!dep) continue;
    for (const ExecutedAction& b : executed)
      if (key_of(c.shape, b.rank, b.action) == *dep) {
        EXPECT_LT(b.end_tick, a.start_tick)
            << "rank " << a.rank << "'s " << action_name(a.action, true);
      }
  }
}

TEST(Executor, GPipeAndOneFOneBEqualOneDevice) {
  for (const char* name : {"gpipe", "1f1b"})
    for (int p : {2, 4}) run_case({name, {p, 6, 1}});
}

TEST(Executor, InterleavedAndZeroBubbleEqualOneDevice) {
  run_case({"interleaved", {2, 4, 2}});
  run_case({"interleaved", {1, 3, 2}});  // one rank, two chunks: messages to itself
  run_case({"zb-h1", {2, 4, 1}});
  run_case({"zb-h1", {4, 5, 1}});
}

// DP × PP: 2 replicas of a 2-stage 1F1B pipeline on 4 thread ranks (chapter 3's ProcessGrid),
// each replica its own 3 micro-batches, equal the one-device step over all 6 (the order of the
// sums differs: 1e-12 relative).
TEST(Executor, DataParallelPipelinesEqualOneDevice) {
  const train::Config config = small_config();
  const int batch = 2, seq_len = 5, m = 3, replicas = 2, p = 2;
  const auto all = random_micro_batches(config, replicas * m, batch, seq_len, 77);
  train::Model<double> whole(config, batch);
  whole.init(78);
  const double want_loss = single_device_step(whole, all);
  const Schedule schedule = make_schedule("1f1b", {p, m, 1});
  const std::vector<int> cuts = even_boundaries(config.n_layer, p);
  std::mutex mutex;
  std::vector<std::vector<double>> assembled(
      replicas,
      std::vector<double>(whole.layout().total(), std::numeric_limits<double>::quiet_NaN()));
  std::vector<double> losses(replicas * p);
  coll::run_ranks(replicas * p, [&](coll::Communicator& world) {
    coll::ProcessGrid grid(world, {replicas, 1, p, 1});
    const int dp = grid.coordinates().dp, stage = grid.coordinates().pp;
    auto chunks = make_rank_models<double>(config, batch, schedule.shape, cuts, stage, 78);
    const std::span<const train::Batch> mine(all.data() + dp * m, m);
    const RankResult r = execute_data_parallel<double>(grid, schedule, chunks, mine);
    const std::lock_guard<std::mutex> lock(mutex);
    losses[world.rank()] = r.loss;
    for (const auto& chunk : chunks)
      train::copy_to_whole<double>(chunk->layout(), chunk->grads().span(), whole.layout(),
                                   assembled[dp]);
  });
  for (double loss : losses) EXPECT_NEAR(loss, want_loss, 1e-12 * std::fabs(want_loss));
  for (int d = 0; d < replicas; ++d)
    for (std::size_t i = 0; i < assembled[d].size(); ++i)
      ASSERT_NEAR(assembled[d][i], whole.grads()[i],
                  1e-12 * std::max(1.0, std::fabs(whole.grads()[i])))
          << "replica " << d << ", element " << i;
  EXPECT_EQ(assembled[0], assembled[1]) << "the replicas must hold the same averaged gradients";
}

TEST(Executor, RefusesMismatchedInputs) {
  const train::Config config = small_config();
  testing::expect_error(
      [&] {
        make_rank_models<double>(config, 1, {2, 2, 1}, {0, 2, 3}, 0, 1);
      },
      "3 cuts for 2 virtual stages over 4 layers");
  testing::expect_error([&] { even_boundaries(config.n_layer, 5); }, "fewer layers than stages");
  const auto micro = random_micro_batches(config, 3, 1, 4, 5);
  testing::expect_error(
      [&] {
        coll::run_ranks(2, [&](coll::Communicator& comm) {
          auto chunks = make_rank_models<double>(config, 1, {2, 4, 1}, {0, 2, 4}, comm.rank(), 1);
          execute<double>(comm, gpipe_schedule({2, 4, 1}), chunks, micro);
        });
      },
      "3 micro-batches for m = 4");
}

// Issue 36: a hand-built schedule that deadlocks used to run until the communicator's timeout
// (30 s) and end as "timed out waiting for a message from rank 0"; the executor now asks the
// simulator first and names the deadlock at once, on every rank, before a message is sent.
TEST(Executor, ADeadlockingScheduleIsRefusedBeforeItRuns) {
  const train::Config config = small_config();
  Schedule crossed{"crossed", {2, 2, 1}, false, {}};
  crossed.ranks = {
      {{Op::kForward, 0, 0}, {Op::kBackward, 0, 0}, {Op::kForward, 1, 0}, {Op::kBackward, 1, 0}},
      {{Op::kForward, 1, 0}, {Op::kBackward, 1, 0}, {Op::kForward, 0, 0}, {Op::kBackward, 0, 0}}};
  const auto micro = random_micro_batches(config, 2, 1, 4, 5);
  testing::expect_error(
      [&] {
        coll::ThreadsOptions threads;
        threads.timeout = std::chrono::milliseconds(2000);
        coll::run_ranks(
            2,
            [&](coll::Communicator& comm) {
              auto chunks =
                  make_rank_models<double>(config, 1, {2, 2, 1}, {0, 2, 4}, comm.rank(), 1);
              execute<double>(comm, crossed, chunks, micro);
            },
            threads);
      },
      {"'crossed' deadlocks", "rank 0 at B0 waits for B0 of virtual stage 1"});
}

}  // namespace
}  // namespace book::pp
