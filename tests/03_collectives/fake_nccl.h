// A fake NcclApi for the NCCL backend's CPU tests: it records every call in order, fails the one
// it is told to (by name, on its n-th use, with the given ncclResult_t), reports the asynchronous
// error and stream state it is given, and keeps "device" memory on the host, where one rank's
// sends to itself come back to its receives (so sendrecv_reduce's result can be checked). Its
// all-gather plays the other ranks as if each had sent what this one sent, except where a test
// plants a different byte in one rank's part (so the fingerprint check can be made to disagree).
#pragma once

#include <algorithm>
#include <cstring>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "chapters/03_collectives/nccl_api.h"

namespace book::coll::testing {

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
  struct Planted {
    int rank = -1;           // whose part of an all-gather's output differs (-1: none)
    std::size_t offset = 0;  // which byte of that part
    std::byte value{};       // and what it holds
  } planted;

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
  void copy_to_device(void* device, const void* host, std::size_t bytes, CUstream_st*) override {
    calls.push_back("copy_to_device " + std::to_string(bytes));
    std::memcpy(device, host, bytes);
  }
  void copy_to_host(void* host, const void* device, std::size_t bytes, CUstream_st*) override {
    calls.push_back("copy_to_host " + std::to_string(bytes));
    std::memcpy(host, device, bytes);
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
    ranks_ = size;
    const int r = result("comm_init_rank");
    *comm = r == nccl_result::kSuccess ? token() : nullptr;
    return r;
  }
  int comm_split(ncclComm*, int color, int key, ncclComm** child) override {
    calls.push_back("comm_split " + std::to_string(color) + " " + std::to_string(key));
    ranks_ = count;
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
  int all_gather(const void* send, void* recv, std::size_t n, DType dtype, ncclComm*,
                 CUstream_st*) override {
    const int r = record("all_gather " + std::to_string(n));
    if (r != nccl_result::kSuccess || send == nullptr || recv == nullptr) return r;
    const std::size_t part = n * dtype_size(dtype);
    auto* out = static_cast<std::byte*>(recv);
    const std::vector<std::byte> sent(static_cast<const std::byte*>(send),
                                      static_cast<const std::byte*>(send) + part);
    for (int rank = 0; rank < ranks_; ++rank) std::memcpy(out + rank * part, sent.data(), part);
    if (planted.rank >= 0 && planted.offset < part)
      out[planted.rank * part + planted.offset] = planted.value;
    return r;
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
  int ranks_ = 1;  // the size of the group last made: comm_init_rank's, or comm_count's for a split
  int stream_token_ = 0;
  int comm_tokens_[8] = {};
  int next_token_ = 0;
  std::deque<std::vector<std::byte>> loopback_;
};

}  // namespace book::coll::testing
