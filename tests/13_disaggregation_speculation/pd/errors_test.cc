// Scaffolding on the reference pd.kv_transfer: what disaggregation refuses, by name, and a peer
// that goes silent mid-transfer ending in the Communicator's timeout error instead of a hang.
#include <gtest/gtest.h>

#include <chrono>

#include "chapters/04_training_baseline/data.h"
#include "chapters/10_paged_attention/served_model.h"
#include "chapters/13_disaggregation_speculation/pd/disaggregated.h"
#include "chapters/13_disaggregation_speculation/pd/kv_transfer.h"
#include "chapters/13_disaggregation_speculation/pd/pd_sim.h"
#include "common/testing/expect_error.h"

namespace book::pd {
namespace {

using book::testing::expect_error;

std::unique_ptr<train::Model<float>> trained() {
  return kv::load_checkpoint_model(
      kv::runfile("chapters/10_paged_attention/addition_checkpoint.bin"));
}

std::vector<TimedGeneration> three_requests() {
  std::vector<TimedGeneration> out(3);
  for (auto& g : out) {
    g.request.prompt = {1, 2, 10, 3, 4, 11};
    g.request.max_tokens = 3;
  }
  return out;
}

PdConfig small() {
  PdConfig c;
  c.prefill.kv_blocks = c.decode.kv_blocks = 16;
  c.prefill.block_size = c.decode.block_size = 4;
  c.prefill.scheduler = c.decode.scheduler = {4, 32, true};
  return c;
}

TEST(PdErrors, APoolOfSizeZeroIsRefusedByName) {
  auto model = trained();
  PdConfig c = small();
  c.prefill_workers = 0;
  expect_error([&] { serve_disaggregated(*model, three_requests(), c); },
               {"prefill_workers = 0", "prefill pool"});
  c = small();
  c.decode_workers = 0;
  expect_error([&] { serve_disaggregated(*model, three_requests(), c); },
               {"decode_workers = 0", "decode pool"});
  SimDeployment d;
  d.prefill_workers = 0;
  expect_error([&] { simulate_deployment(fixed_prompt_workload(4, 8, 1, 2, 1, 1), d); },
               {"prefill_workers = 0", "prefill pool"});
  d = {};
  d.decode_workers = 0;
  expect_error([&] { simulate_deployment(fixed_prompt_workload(4, 8, 1, 2, 1, 1), d); },
               {"decode_workers = 0", "decode pool"});
}

TEST(PdErrors, AKvTransferOfAnotherShapeIsRefusedNamingBothShapes) {
  kv::PagedKvCache receiver(kv::KvShape{4, 4, 16}, 8, 4);
  KvPacket packet;
  packet.header = {4, 2, 16, 5};  // fewer heads: grouped-query attention on the other side
  packet.data.assign(static_cast<std::size_t>(kv_transfer_numbers({4, 2, 16}, 5)), 1.0f);
  const std::vector<kv::BlockId> table{0, 1};
  expect_error([&] { check_transfer(packet, receiver, table, 0); },
               {"4 layers × 2 heads × 16 head_dim", "receiver's cache shape",
                "4 layers × 4 heads × 16 head_dim"});
  packet.header = {4, 4, 16, 5};
  expect_error([&] { check_transfer(packet, receiver, table, 0); },
               {"carries 1280 numbers", "says 2560"});
  packet.data.resize(2560);
  expect_error([&] { check_transfer(packet, receiver, std::vector<kv::BlockId>{0}, 0); },
               {"1 blocks of 4 slots", "5 tokens"});
}

TEST(PdErrors, ARequestTheDecodePoolCouldNeverHoldIsRefusedUpFront) {
  auto model = trained();
  PdConfig c = small();
  c.decode.kv_blocks = 1;  // 4 slots: a 6-token prompt never fits
  expect_error([&] { serve_disaggregated(*model, three_requests(), c); },
               {"decode pool cannot serve request 0", "more than the whole cache of 1"});
}

TEST(PdErrors, APrefillPeerThatGoesSilentMidTransferEndsInTheTimeoutNotAHang) {
  auto model = trained();
  PdConfig c = small();
  c.timeout = std::chrono::milliseconds(300);
  c.die_after_headers = 1;  // sends request 0's header, then nothing
  const auto start = std::chrono::steady_clock::now();
  expect_error([&] { serve_disaggregated(*model, three_requests(), c); },
               {"timed out after 300 ms", "waiting for a message from rank 0"});
  // Not a timing assertion on the work: a bound far above 3 timeouts that only a hang breaks.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
}

}  // namespace
}  // namespace book::pd
