// The split system as MPI processes (run under mpirun by mpi_test): rank 0 the prefill worker,
// rank 1 the decode worker, the KV sent through chapter 3's MpiCommunicator by the very code the
// thread ranks run. Chapter 4's trained addition model answers token for token as the colocated
// engine does (each process runs that too), the KV bytes are the formula's, and a communicator of
// the wrong size is refused on every rank alike (no rank waits for one that gave up).
#include <gtest/gtest.h>

#include "chapters/03_collectives/mpi.h"
#include "chapters/04_training_baseline/data.h"
#include "chapters/10_paged_attention/served_model.h"
#include "chapters/13_disaggregation_speculation/pd/disaggregated.h"
#include "common/rng.h"
#include "common/testing/expect_error.h"

namespace book::pd {
namespace {

const std::string kCheckpoint = "chapters/10_paged_attention/addition_checkpoint.bin";

// `n` held-out sums "a+b=" asking for the whole answer, arriving over 20 ms.
std::vector<TimedGeneration> sums(const train::Model<float>& model, int n) {
  const train::AdditionTask task(kv::addition_digits(model.config()));
  Rng rng(5);
  std::vector<TimedGeneration> out;
  for (int i = 0; i < n; ++i) {
    const auto [a, b] = task.sample(rng, train::Split::kValidation);
    TimedGeneration g;
    g.request.prompt = task.encode(a, b);
    g.request.prompt.resize(task.prompt_length());
    g.request.max_tokens = task.answer_length();
    g.arrival_ms = 20.0 * i / n;
    out.push_back(g);
  }
  return out;
}

WorkerConfig roomy() {
  WorkerConfig w;
  w.kv_blocks = 64;
  w.block_size = 4;
  w.scheduler = {8, 64, true};
  return w;
}

TEST(DisaggregationMpi, AnswersTokenForTokenAsTheColocatedEngine) {
  coll::MpiCommunicator world;
  ASSERT_GE(world.size(), 2) << "run under mpirun -np 2 (or more)";
  auto model = kv::load_checkpoint_model(kv::runfile(kCheckpoint));
  const auto requests = sums(*model, 24);
  PdConfig config;
  config.prefill_workers = 1;
  config.decode_workers = world.size() - 1;
  config.prefill = config.decode = roomy();
  config.timeout = std::chrono::milliseconds(10000);
  const PdResult split = serve_disaggregated(world, *model, requests, config);
  const PdResult colocated = serve_colocated(*model, requests, roomy());
  const train::Config& c = model->config();
  for (std::size_t i = 0; i < requests.size(); ++i) {
    ASSERT_EQ(split.tokens[i], colocated.tokens[i])
        << "rank " << world.rank() << ", request " << i << ": the decode process must continue "
        << "from the received KV exactly where the colocated engine continues from its own";
    const std::int64_t prompt = static_cast<std::int64_t>(requests[i].request.prompt.size());
    EXPECT_EQ(split.kv_bytes[i],
              2 * c.n_layer * c.n_head * (c.d_model / c.n_head) * prompt * sizeof(float))
        << "request " << i << ": 2 · layers · heads · head_dim · prompt tokens · 4 bytes";
    EXPECT_GT(split.timings[i].finish_ms, 0) << "request " << i << ": merged from the ranks";
  }
}

TEST(DisaggregationMpi, PoolsThatDoNotAddUpToTheProcessesAreRefusedOnEveryRank) {
  coll::MpiCommunicator world;
  auto model = kv::load_checkpoint_model(kv::runfile(kCheckpoint));
  const auto requests = sums(*model, 2);
  PdConfig config;
  config.prefill_workers = world.size();
  config.decode_workers = 2;
  config.prefill = config.decode = roomy();
  book::testing::expect_error([&] { serve_disaggregated(world, *model, requests, config); },
                              "the communicator has " + std::to_string(world.size()) +
                                  " ranks, but " + std::to_string(world.size()) +
                                  " prefill + 2 decode workers need " +
                                  std::to_string(world.size() + 2));
  world.barrier();  // every rank got here: none is left waiting
}

}  // namespace
}  // namespace book::pd
