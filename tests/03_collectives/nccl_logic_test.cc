// The NCCL backend's logic without a GPU: NcclCommunicator over a fake NcclApi that records every
// call, fails the one it is told to, and keeps "device" memory on the host (one rank's sends to
// itself come back to its receives). What a first GPU run would otherwise find the hard way:
// all_to_all's counts checked before ncclGroupStart, a group that ends when a call inside it
// throws, ncclCommAbort (never ncclCommDestroy) after an asynchronous error, a failed stream or
// a timeout, sendrecv_reduce / reduce_local / temporary() on device memory, the fingerprint check
// through device memory, and the refusal of two ranks on one GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "chapters/03_collectives/nccl.h"
#include "common/testing/expect_error.h"
#include "tests/03_collectives/fake_nccl.h"

namespace book::coll {
namespace {

using ::book::testing::expect_error;
using testing::FakeNccl;

NcclId any_id() { return NcclId{}; }

TEST(NcclLogic, AllToAllChecksCountsAndTypesBeforeTheGroupStarts) {
  FakeNccl nccl;
  nccl.user_rank = 1;
  NcclCommunicator comm(nccl, 1, 3, any_id(), 0);
  std::vector<float> in(6), out(6);
  std::vector<BFloat16> out16(6);
  const std::vector<std::size_t> two = {3, 3}, three = {2, 2, 2}, too_many = {2, 2, 3};
  expect_error([&] { comm.all_to_all(Buffer(std::span(in)), two, Buffer(std::span(out)), three); },
               {"one entry per rank (3)", "got 2 and 3"});
  expect_error(
      [&] { comm.all_to_all(Buffer(std::span(in)), too_many, Buffer(std::span(out)), three); },
      {"send_counts add up to 7", "input has 6 elements"});
  expect_error(
      [&] { comm.all_to_all(Buffer(std::span(in)), three, Buffer(std::span(out)), too_many); },
      {"recv_counts add up to 7", "output has 6 elements"});
  expect_error(
      [&] { comm.all_to_all(Buffer(std::span(in)), three, Buffer(std::span(out16)), three); },
      {"input is f32 but output is bf16"});
  const std::vector<std::size_t> self_differs = {2, 1, 3};
  expect_error(
      [&] { comm.all_to_all(Buffer(std::span(in)), three, Buffer(std::span(out)), self_differs); },
      {"rank 1 sends itself 2 elements but expects 1"});
  EXPECT_FALSE(nccl.was_called("group_start")) << "a refused all_to_all must enqueue nothing";
  EXPECT_FALSE(nccl.was_called("send"));
  // Good counts: one group, a send and a receive per peer, in bytes.
  comm.all_to_all(Buffer(std::span(in)), three, Buffer(std::span(out)), three);
  const std::vector<std::string> expected = {"group_start", "send 0 8", "recv 0 8", "send 1 8",
                                             "recv 1 8",    "send 2 8", "recv 2 8", "group_end"};
  const auto first = std::find(nccl.calls.begin(), nccl.calls.end(), "group_start");
  EXPECT_EQ(std::vector<std::string>(first, nccl.calls.end()), expected);
}

TEST(NcclLogic, AGroupEndsWhenACallInsideItFails) {
  FakeNccl nccl;
  NcclCommunicator comm(nccl, 0, 2, any_id(), 0);
  comm.set_fingerprint_check(false);  // the calls compared here are the collectives' own
  std::vector<float> in(4), out(4);
  const std::vector<std::size_t> counts = {2, 2};
  nccl.fail_call = "send";
  nccl.fail_nth = 2;  // the send to rank 1, inside the group
  expect_error(
      [&] { comm.all_to_all(Buffer(std::span(in)), counts, Buffer(std::span(out)), counts); },
      {"all_to_all", "ncclSend failed", "planted NCCL error 4", "what NCCL logged"});
  EXPECT_EQ(nccl.group_depth, 0) << "the group was left open";
  EXPECT_EQ(nccl.calls.back(), "group_end");
  EXPECT_FALSE(comm.aborted()) << "an argument error is not a reason to abort";
  // The next call is its own, not part of a group that never ended.
  nccl.calls.clear();
  comm.all_reduce(Buffer(std::span(in)));
  EXPECT_EQ(nccl.calls, std::vector<std::string>{"all_reduce 4"});
  // The same in sendrecv (the ring's step) and sendrecv_reduce.
  nccl.fail_call = "recv";
  nccl.fail_nth = 1;
  expect_error([&] { comm.sendrecv(std::span<const float>(in), 1, std::span(out), 1, 0); },
               "ncclRecv failed");
  EXPECT_EQ(nccl.group_depth, 0);
  nccl.fail_call = "recv";
  nccl.fail_nth = 1;
  expect_error(
      [&] {
        comm.sendrecv_reduce(std::span<const float>(in), 1, std::span(out), 1, 0, ReduceOp::kSum);
      },
      "ncclRecv failed");
  EXPECT_EQ(nccl.group_depth, 0);
  EXPECT_EQ(nccl.devices_reduced, 0) << "nothing to reduce after a failed receive";
}

TEST(NcclLogic, AnAsynchronousErrorAbortsTheCommunicator) {
  FakeNccl nccl;
  {
    NcclCommunicator comm(nccl, 0, 2, any_id(), 0);
    std::vector<float> data(5);
    nccl.stream_state = StreamState::kBusy;
    nccl.async_error = nccl_result::kRemoteError;
    expect_error([&] { comm.all_reduce(Buffer(std::span(data))); },
                 {"all_reduce(ncclAllReduce)", "an asynchronous NCCL error", "planted NCCL error 6",
                  "ncclCommAbort"});
    EXPECT_TRUE(comm.aborted());
    EXPECT_TRUE(nccl.was_called("comm_abort"));
    expect_error([&] { comm.barrier(); }, {"was aborted after an earlier error",
                                           "asynchronous NCCL error", "create a new one"});
  }
  EXPECT_FALSE(nccl.was_called("comm_destroy")) << "an aborted communicator is not destroyed";
  EXPECT_TRUE(nccl.was_called("destroy_stream"));
}

TEST(NcclLogic, AFailedStreamOrATimeoutAbortsToo) {
  FakeNccl failed;
  {
    NcclCommunicator comm(failed, 0, 1, any_id(), 0);
    std::vector<float> data(3);
    failed.stream_state = StreamState::kFailed;
    expect_error([&] { comm.broadcast(Buffer(std::span(data)), 0); },
                 {"the stream failed", "cudaErrorIllegalAddress"});
    EXPECT_TRUE(comm.aborted());
  }
  EXPECT_TRUE(failed.was_called("comm_abort"));
  EXPECT_FALSE(failed.was_called("comm_destroy"));

  FakeNccl slow;
  NcclCommunicator comm(slow, 0, 2, any_id(), 0);
  comm.set_timeout(std::chrono::milliseconds(30));
  slow.stream_state = StreamState::kBusy;  // a peer that never joins
  std::vector<float> data(3);
  expect_error([&] { comm.all_reduce(Buffer(std::span(data))); },
               {"timed out after 30 ms", "a peer rank never joined", "ncclCommAbort"});
  EXPECT_TRUE(slow.was_called("comm_abort"));
}

TEST(NcclLogic, TheDestructorAbortsWhenNcclReportsAnErrorAndDestroysOtherwise) {
  FakeNccl healthy;
  { NcclCommunicator comm(healthy, 0, 1, any_id(), 0); }
  EXPECT_TRUE(healthy.was_called("comm_destroy"));
  EXPECT_FALSE(healthy.was_called("comm_abort"));
  FakeNccl broken;
  {
    NcclCommunicator comm(broken, 0, 1, any_id(), 0);
    broken.async_error = nccl_result::kSystemError;  // appears after the last call
  }
  EXPECT_TRUE(broken.was_called("comm_abort"));
  EXPECT_FALSE(broken.was_called("comm_destroy"));
}

TEST(NcclLogic, AFailedInitReleasesTheStreamAndSaysWhy) {
  FakeNccl nccl;
  nccl.fail_call = "comm_init_rank";
  nccl.fail_result = nccl_result::kInvalidUsage;
  expect_error([&] { NcclCommunicator comm(nccl, 1, 2, any_id(), 0, "world"); },
               {"ncclCommInitRank failed", "planted NCCL error 5"});
  EXPECT_EQ(nccl.calls.back(), "destroy_stream");
}

TEST(NcclLogic, SendrecvReduceAndReduceLocalRunOnTheDevice) {
  FakeNccl nccl;
  NcclCommunicator comm(nccl, 0, 1, any_id(), 0);
  std::vector<float> out = {1, 2, 3}, inout = {10, 20, 30}, extra = {100, 200, 300};
  comm.sendrecv_reduce(std::span<const float>(out), 0, std::span(inout), 0, 5, ReduceOp::kSum);
  EXPECT_EQ(inout, (std::vector<float>{11, 22, 33}));
  // The incoming chunk landed in device memory the backend allocated, and a device reduce (not
  // the host's reduce_into) added it into inout.
  EXPECT_TRUE(nccl.on_device(nccl.last_recv));
  EXPECT_EQ(nccl.last_reduce_dst, inout.data());
  EXPECT_EQ(nccl.last_reduce_src, nccl.last_recv);
  EXPECT_EQ(comm.counters().bytes_sent, 12u);
  EXPECT_EQ(comm.counters().bytes_received, 12u);
  comm.reduce_local(std::span(inout), std::span<const float>(extra), ReduceOp::kMax);
  EXPECT_EQ(inout, (std::vector<float>{100, 200, 300}));
  EXPECT_EQ(nccl.devices_reduced, 2);
  const Buffer scratch = comm.temporary(16, DType::kBF16);
  EXPECT_TRUE(nccl.on_device(scratch.data)) << "temporary() must be device memory on NCCL";
  std::vector<double> wrong(3);
  expect_error(
      [&] { comm.reduce_local(std::span(inout), std::span<const double>(wrong), ReduceOp::kSum); },
      {"reduce_local needs the same count and type", "3 f32 and 3 f64"});
}

TEST(NcclLogic, CollectivesCheckTheirArgumentsBeforeCallingNccl) {
  FakeNccl nccl;
  NcclCommunicator comm(nccl, 1, 4, any_id(), 0);
  comm.set_fingerprint_check(false);  // the calls compared here are the collectives' own
  std::vector<float> eight(8), two(2), three(3);
  nccl.calls.clear();
  expect_error([&] { comm.all_reduce(Buffer(std::span(eight)), ReduceOp::kSum, Algorithm::kRing); },
               {"NCCL runs its own algorithms", "not ring"});
  expect_error([&] { comm.reduce_scatter(std::span<const float>(eight), std::span(three)); },
               {"equal shards", "got output 3 f32"});
  expect_error([&] { comm.all_gather(std::span<const float>(three), std::span(eight)); },
               {"equal shards", "got input 3 f32"});
  expect_error([&] { comm.broadcast(Buffer(std::span(two)), 4); }, "root 4 is not a rank (0..3)");
  expect_error([&] { comm.reduce(std::span<const float>(eight), Buffer(), 7); },
               "root 7 is not a rank");
  expect_error([&] { comm.reduce(std::span<const float>(eight), std::span(three), 1); },
               "the root's output must have the input's 8 f32 elements, got 3 f32");
  expect_error([&] { comm.all_reduce(Buffer(nullptr, 4, DType::kF32)); },
               "the data buffer is null");
  EXPECT_TRUE(nccl.calls.empty()) << "refused calls reached NCCL: " << nccl.calls.front();
  comm.reduce(std::span<const float>(eight), Buffer(), 0);  // not the root: no output needed
  comm.reduce_scatter(std::span<const float>(eight), std::span(two));
  EXPECT_EQ(nccl.calls, (std::vector<std::string>{"reduce 8", "reduce_scatter 2"}));
}

// The fingerprint check on NCCL: this rank's 16 bytes copied to the device, one in-place
// ncclAllGather, all of them copied back and compared, all before the collective is enqueued; a
// rank whose fingerprint differs (planted in the fake's all-gather) stops it on every rank.
TEST(NcclLogic, TheFingerprintCheckGathersOnTheDeviceBeforeTheCollective) {
  FakeNccl nccl;
  nccl.user_rank = 1;
  NcclCommunicator comm(nccl, 1, 3, any_id(), 0);
  comm.set_fingerprint_check(true);
  std::vector<float> data(8);
  nccl.calls.clear();
  comm.all_reduce(Buffer(std::span(data)));
  EXPECT_EQ(nccl.calls,
            (std::vector<std::string>{"device_alloc 48", "copy_to_device 16", "all_gather 4",
                                      "copy_to_host 48", "all_reduce 8"}));
  // Rank 2 passes the same 32 bytes as 16 bf16 (the fingerprint's second byte is the type).
  nccl.planted = {2, 1, static_cast<std::byte>(DType::kBF16)};
  nccl.calls.clear();
  expect_error([&] { comm.all_reduce(Buffer(std::span(data))); },
               {"all_reduce(ncclAllReduce)", "fingerprint check",
                "rank 0 calls all_reduce(8 x f32, sum)", "rank 2 calls all_reduce(8 x bf16, sum)"});
  EXPECT_FALSE(nccl.was_called("all_reduce")) << "a refused collective must enqueue nothing";
  // Every collective checks: a broadcast whose root differs on rank 0.
  nccl.planted = {0, 4, std::byte{2}};  // the root, a little-endian int32 at byte 4
  expect_error(
      [&] { comm.broadcast(Buffer(std::span(data)), 1); },
      {"rank 0 calls broadcast(8 x f32, root 2)", "rank 1 calls broadcast(8 x f32, root 1)"});
  EXPECT_FALSE(nccl.was_called("broadcast"));
  // Off: the collective goes straight to NCCL.
  comm.set_fingerprint_check(false);
  nccl.calls.clear();
  comm.all_reduce(Buffer(std::span(data)));
  EXPECT_EQ(nccl.calls, std::vector<std::string>{"all_reduce 8"});
}

TEST(NcclLogic, SplitTakesRankAndSizeFromNcclAndInheritsSettings) {
  FakeNccl nccl;
  NcclCommunicator comm(nccl, 2, 4, any_id(), 3, "world");
  comm.set_timeout(std::chrono::milliseconds(1234));
  nccl.user_rank = 1;
  nccl.count = 2;
  auto child = comm.split(5, 0);
  ASSERT_NE(child, nullptr);
  EXPECT_EQ(child->rank(), 1);
  EXPECT_EQ(child->size(), 2);
  EXPECT_EQ(child->group(), "world/split0:5");
  EXPECT_EQ(child->timeout(), std::chrono::milliseconds(1234));
  EXPECT_EQ(comm.split(-1, 0), nullptr) << "a negative color joins no group";
}

TEST(NcclLogic, TwoRanksOnOneGpuAreRefusedSayingHowManyToStart) {
  EXPECT_EQ(nccl_device_for(0, 1, 1), 0);
  EXPECT_EQ(nccl_device_for(3, 4, 8), 3);
  expect_error([] { nccl_device_for(1, 2, 1); },
               {"2 ranks run on this host but it has 1 GPU:", "one GPU per rank",
                "at most 1 ranks per host", "ppr:1:node"});
  expect_error([] { nccl_device_for(5, 8, 4); }, {"8 ranks", "4 GPUs", "mpirun -np 4"});
  expect_error([] { nccl_device_for(0, 1, 0); }, "sees no GPU");
  expect_error([] { nccl_device_for(2, 2, 4); }, "local rank 2 is not in 0..1");
}

}  // namespace
}  // namespace book::coll
