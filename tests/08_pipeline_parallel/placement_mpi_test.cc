// The placements of a 2 × 2 grid as 4 real processes (mpi_test_np4; every process on this host,
// with the layout of 2 nodes × 2 ranks given by hand, so no namespace cluster is needed): each
// permuted world over chapter 3's MPI backend gives the loss of the same grid on 4 thread ranks
// bit for bit, and the traffic its groups count equals predict_traffic, to the byte and the
// message. The namespace cluster changes only which link carries the bytes.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "chapters/03_collectives/mpi.h"
#include "chapters/08_pipeline_parallel/placement.h"

namespace book::pp {
namespace {

TEST(PlacementMpi, LossesBitForBitAndTrafficAsPredicted) {
  coll::MpiCommunicator world;
  if (world.size() != 4) GTEST_SKIP() << "the placements need 4 processes, got " << world.size();
  coll::ClusterLayout layout;
  layout.nodes = 2, layout.ranks_per_node = 2, layout.rate = "none (one host)";
  PlacementOptions options;
  options.config.n_layer = 2, options.config.d_model = 8, options.config.n_head = 2;
  options.config.vocab_size = 6, options.config.context = 5;
  options.micro_batches = 3, options.batch = 2, options.repetitions = 1;
  const std::vector<PlacementResult> results = measure_placements(world, layout, options);
  ASSERT_EQ(results.size(), 6u);
  for (const PlacementResult& r : results) {
    const std::string name = r.placement.name();
    EXPECT_EQ(r.counted.across.bytes, r.predicted.across.bytes) << name;
    EXPECT_EQ(r.counted.across.messages, r.predicted.across.messages) << name;
    EXPECT_EQ(r.counted.inside.bytes, r.predicted.inside.bytes) << name;
    EXPECT_EQ(r.counted.inside.messages, r.predicted.inside.messages) << name;
    // Every process checks against its own thread ranks: the same bits, whatever the backend.
    EXPECT_EQ(r.loss, thread_reference_loss(r.placement, options))
        << name << " on rank " << world.rank() << ": not bit for bit";
  }
}

}  // namespace
}  // namespace book::pp
