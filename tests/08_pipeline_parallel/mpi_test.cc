// The executor over real processes: mpi_test() starts this binary N times under mpirun (N = 2 in
// CI), each process one pipeline stage over chapter 3's MPI backend. Each process also runs the
// one-device step itself, so every check is local: the loss of 1F1B (and of GPipe, interleaved
// and ZB-H1) equals the one-device loss bit for bit (double precision: the stages add the same
// numbers in the same order as one device), every gradient this stage holds equals the
// one-device gradient (the tied embedding, summed between the first and last stage, to 1e-12
// relative), and b·s·h elements cross the boundary per micro-batch each way, counted by the
// Communicator.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "chapters/03_collectives/mpi.h"
#include "chapters/04_training_baseline/parameter_copy.h"
#include "chapters/08_pipeline_parallel/executor.h"
#include "chapters/08_pipeline_parallel/partition.h"
#include "chapters/08_pipeline_parallel/registry.h"

namespace book::pp {
namespace {

void run_schedule(const std::string& name, int chunks_per_rank) {
  coll::MpiCommunicator comm;
  const int p = comm.size(), rank = comm.rank();
  train::Config config;
  config.vocab_size = 13, config.context = 7, config.n_layer = 4, config.n_head = 2;
  config.d_model = 8;
  if (config.n_layer < p) GTEST_SKIP() << p << " processes for " << config.n_layer << " layers";
  const int batch = 2, seq_len = 5, m = 2 * p;
  const auto micro = random_micro_batches(config, m, batch, seq_len, 51);
  train::Model<double> whole(config, batch);
  whole.init(52);
  const double want_loss = single_device_step(whole, micro);

  const Schedule schedule = make_schedule(name, {p, m, chunks_per_rank});
  auto chunks = make_rank_models<double>(
      config, batch, schedule.shape,
      even_boundaries(config.n_layer, schedule.shape.virtual_stages()), rank, 52);
  const RankResult result = execute<double>(comm, schedule, chunks, micro);
  SCOPED_TRACE(name + ", rank " + std::to_string(rank) + " of " + std::to_string(p));
  EXPECT_EQ(result.loss, want_loss) << "the loss must be bit-identical";

  std::vector<double> placed(whole.layout().total(), std::numeric_limits<double>::quiet_NaN());
  for (const auto& chunk : chunks)
    train::copy_to_whole<double>(chunk->layout(), chunk->grads().span(), whole.layout(), placed);
  std::size_t compared = 0;
  for (const auto& slot : whole.layout().slots())
    for (std::size_t i = slot.offset; i < slot.offset + slot.size(); ++i) {
      if (std::isnan(placed[i])) continue;  // another stage's layers
      ++compared;
      const double want = whole.grads()[i];
      if (slot.name == "wte")
        ASSERT_NEAR(placed[i], want, 1e-12 * std::max(1.0, std::fabs(want)))
            << slot.name << "[" << i - slot.offset << "]";
      else
        ASSERT_EQ(placed[i], want) << slot.name << "[" << i - slot.offset << "]";
    }
  EXPECT_GT(compared, 0u) << "this stage held no gradient";

  const std::uint64_t per_message =
      static_cast<std::uint64_t>(batch) * seq_len * config.d_model * sizeof(double);
  if (chunks_per_rank == 1) {
    const std::uint64_t sends = (rank < p - 1 ? m : 0) + (rank > 0 ? m : 0);
    EXPECT_EQ(result.traffic.bytes_sent, sends * per_message);
    EXPECT_EQ(result.traffic.bytes_received, sends * per_message);
  }
}

TEST(PipelineMpi, OneFOneBEqualsOneDevice) { run_schedule("1f1b", 1); }

TEST(PipelineMpi, GPipeInterleavedAndZeroBubbleEqualOneDevice) {
  run_schedule("gpipe", 1);
  run_schedule("interleaved", 2);  // 4 layers over p·v = 4 virtual stages at p = 2
  run_schedule("zb-h1", 1);
}

}  // namespace
}  // namespace book::pp
