// The NCCL backend's logic without a GPU: NcclCommunicator over a fake NcclApi that records every
// call, fails the one it is told to, and keeps "device" memory on the host (one rank's sends to
// itself come back to its receives). What a first GPU run would otherwise find the hard way:
// all_to_all's counts checked before ncclGroupStart, a group that ends when a call inside it
// throws, ncclCommAbort (never ncclCommDestroy) after an asynchronous error, a failed stream or
// a timeout, sendrecv_reduce / reduce_local / temporary() on device memory, and the refusal of
// two ranks on one GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "chapters/03_collectives/nccl.h"
#include "common/testing/expect_error.h"

namespace book::coll {
namespace {

using ::book::testing::expect_error;

class FakeNccl final : public NcclApi {
 public:
  std::vector<std::string> calls;  // in order, e.g. "group_start", "send 0 8"
  int group_depth = 0;
  std::string fail_call;  // the call to fail ("send", "group_end", ...), on its fail_nth use
  int fail_nth = 1;
  int fail_result = nccl_result::kInvalidArgument;
  int async_error = nccl_result::kSuccess;  // what comm_get_async_error reports
  StreamState stream_state = StreamState::kDone;
  int devices_reduced = 0;
  std::map<void*, std::vector<std::byte>> device;  // fake device memory, by address
  int user_rank = 0, count = 1;                    // what comm_user_rank / comm_count answer

  bool was_called(const std::string& prefix) const {
    return std::any_of(calls.begin(), calls.end(),
                       [&](const std::string& c) { return c.rfind(prefix, 0) == 0; });
  }
  bool on_device(const void* p) const {
    for (const auto& [base, bytes] : device)
      if (p >= base && p < static_cast<const std::byte*>(base) + bytes.size()) return true;
    return false;
  }

  void set_device(int d) override { calls.push_back("set_device " + std::to_string(d)); }
  CUstream_st* create_stream() override {
    calls.push_back("create_stream");
    return reinterpret_cast<CUstream_st*>(&stream_token_);
  }
  void destroy_stream(CUstream_st*) noexcept override { calls.push_back("destroy_stream"); }
  StreamState query_stream(CUstream_st*, std::string* error) override {
    if (stream_state == StreamState::kFailed && error) *error = "cudaErrorIllegalAddress: planted";
    return stream_state;
  }
  void* device_alloc(std::size_t bytes) override {
    calls.push_back("device_alloc " + std::to_string(bytes));
    auto storage = std::vector<std::byte>(bytes);
    void* address = storage.data();
    device.emplace(address, std::move(storage));
    return address;
  }
  void device_free(void* data) noexcept override {
    calls.push_back("device_free");
    device.erase(data);
  }
  void device_reduce(Buffer dst, ConstBuffer src, ReduceOp op, CUstream_st*) override {
    calls.push_back("device_reduce");
    ++devices_reduced;
    last_reduce_dst = dst.data;
    last_reduce_src = src.data;
    reduce_into(dst, src, op);  // the "device" is host memory here
  }
  const void* last_reduce_dst = nullptr;
  const void* last_reduce_src = nullptr;

  int get_unique_id(NcclId* id) override {
    std::memset(id->bytes, 7, sizeof id->bytes);
    return result("get_unique_id");
  }
  int comm_init_rank(ncclComm** comm, int size, const NcclId&, int rank) override {
    calls.push_back("comm_init_rank " + std::to_string(rank) + "/" + std::to_string(size));
    const int r = result("comm_init_rank");
    *comm = r == nccl_result::kSuccess ? token() : nullptr;
    return r;
  }
  int comm_split(ncclComm*, int color, int key, ncclComm** child) override {
    calls.push_back("comm_split " + std::to_string(color) + " " + std::to_string(key));
    *child = color < 0 ? nullptr : token();
    return result("comm_split");
  }
  int comm_user_rank(ncclComm*, int* rank) override { return *rank = user_rank, 0; }
  int comm_count(ncclComm*, int* n) override { return *n = count, 0; }
  int comm_get_async_error(ncclComm*, int* async) override {
    *async = async_error;
    return nccl_result::kSuccess;
  }
  int comm_abort(ncclComm*) override { return record("comm_abort"); }
  int comm_destroy(ncclComm*) override { return record("comm_destroy"); }
  int group_start() override {
    ++group_depth;
    return record("group_start");
  }
  int group_end() override {
    --group_depth;
    return record("group_end");
  }
  int all_reduce(const void*, void*, std::size_t n, DType, ReduceOp, ncclComm*,
                 CUstream_st*) override {
    return record("all_reduce " + std::to_string(n));
  }
  int reduce_scatter(const void*, void*, std::size_t n, DType, ReduceOp, ncclComm*,
                     CUstream_st*) override {
    return record("reduce_scatter " + std::to_string(n));
  }
  int all_gather(const void*, void*, std::size_t n, DType, ncclComm*, CUstream_st*) override {
    return record("all_gather " + std::to_string(n));
  }
  int broadcast(const void*, void*, std::size_t n, DType, int, ncclComm*, CUstream_st*) override {
    return record("broadcast " + std::to_string(n));
  }
  int reduce(const void*, void*, std::size_t n, DType, ReduceOp, int, ncclComm*,
             CUstream_st*) override {
    return record("reduce " + std::to_string(n));
  }
  int send(const void* data, std::size_t bytes, int peer, ncclComm*, CUstream_st*) override {
    const int r = record("send " + std::to_string(peer) + " " + std::to_string(bytes));
    if (r == nccl_result::kSuccess && peer == user_rank) {  // to itself: keep it for the recv
      const auto* p = static_cast<const std::byte*>(data);
      loopback_.emplace_back(p, p + bytes);
    }
    return r;
  }
  int recv(void* data, std::size_t bytes, int peer, ncclComm*, CUstream_st*) override {
    last_recv = data;
    const int r = record("recv " + std::to_string(peer) + " " + std::to_string(bytes));
    if (r == nccl_result::kSuccess && peer == user_rank && !loopback_.empty()) {
      std::memcpy(data, loopback_.front().data(), std::min(bytes, loopback_.front().size()));
      loopback_.pop_front();
    }
    return r;
  }
  const void* last_recv = nullptr;
  std::string error_string(int r) override { return "planted NCCL error " + std::to_string(r); }
  std::string last_error(ncclComm*) override { return "what NCCL logged"; }

 private:
  int result(const std::string& call) {
    if (call == fail_call && --fail_nth == 0) return fail_result;
    return nccl_result::kSuccess;
  }
  int record(const std::string& call) {
    calls.push_back(call);
    return result(call.substr(0, call.find(' ')));
  }
  ncclComm* token() { return reinterpret_cast<ncclComm*>(&comm_tokens_[next_token_++ % 8]); }
  int stream_token_ = 0;
  int comm_tokens_[8] = {};
  int next_token_ = 0;
  std::deque<std::vector<std::byte>> loopback_;
};

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
