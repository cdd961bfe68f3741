// The data-parallel step with NCCL moving the gradients (staged through GPU memory), on one GPU
// as one rank: every rung's losses equal chapter 4's bit for bit (NCCL's sum or mean over one rank
// is the buffer itself), through the copies, ncclAllReduce and, for the overlapped rungs, an
// ncclCommSplit group used from the communication thread. Skips without a GPU.
#include <gtest/gtest.h>

#include <memory>

#include "chapters/03_collectives/nccl.h"
#include "chapters/05_data_parallel/ddp_trainer.h"
#include "chapters/05_data_parallel/device_staging.h"
#include "common/testing/gpu.h"
#include "tests/05_data_parallel/tiny_run.h"

namespace book::ddp {
namespace {

TEST(DdpNccl, OneRankOnOneGpuIsChapter4BitForBit) {
  BOOK_REQUIRE_GPU();
  DeviceStagedCommunicator world(
      std::make_unique<coll::NcclCommunicator>(0, 1, coll::nccl_unique_id(), 0, "nccl"), 0);
  for (Rung rung : all_rungs()) {
    const DdpOptions options = testing::tiny_ddp_options(rung);
    const auto one = testing::one_device_run(options.train, 4);
    DdpTrainer trainer(world, options);
    for (int s = 0; s < 4; ++s)
      EXPECT_EQ(trainer.step().loss, one.losses[s]) << rung_name(rung) << " step " << s + 1;
    trainer.verify_replicas();
  }
}

}  // namespace
}  // namespace book::ddp
