// Scaffolding: a Communicator serves one thread at a time. A second thread entering a call on the
// same object is refused with a book::Error (and the first thread's call carries on); two threads
// with a communicator each, split from the same group, run side by side.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <exception>
#include <thread>
#include <vector>

#include "chapters/03_collectives/testing/collective_testing.h"
#include "chapters/03_collectives/threads.h"
#include "common/testing/expect_error.h"

namespace book::coll {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Waits (bounded) until `flag` is set; false if it never was.
bool wait_for(const std::atomic<bool>& flag, std::chrono::milliseconds limit) {
  const auto deadline = Clock::now() + limit;
  while (!flag.load()) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

TEST(ThreadSafety, ASecondThreadOnTheSameCommunicatorIsRefused) {
  std::atomic<bool> refused{false};
  run_ranks(2, [&](Communicator& comm) {
    if (comm.rank() == 1) {
      // Send only once rank 0's second thread has been refused, so that rank 0's receiving thread
      // is certainly inside recv() while the other one tries.
      EXPECT_TRUE(wait_for(refused, 20s)) << "rank 0 never saw the refusal";
      const std::vector<float> message = {1.5f, -2.25f, 3.0f};
      comm.send(std::span<const float>(message), 0, 5);
      comm.barrier();
      return;
    }
    std::vector<float> got(3, NAN);
    std::exception_ptr receiver_error;
    std::thread receiver([&] {
      for (;;) {  // retried while the main thread's reduce_local holds the communicator
        try {
          comm.recv(std::span<float>(got), 1, 5);
          return;
        } catch (const Error& e) {
          if (std::string(e.what()).find("another thread") != std::string::npos) continue;
          receiver_error = std::current_exception();
          return;
        } catch (...) {
          receiver_error = std::current_exception();
          return;
        }
      }
    });
    // A local, non-blocking call, tried until the receiver has claimed the communicator (before
    // that, it simply succeeds). No sleep decides the outcome: the loop ends on the refusal.
    std::vector<float> mine = {0.5f, 0.25f}, theirs = {0.125f, 1.0f};
    std::string message;
    const auto deadline = Clock::now() + 20s;
    while (message.empty() && Clock::now() < deadline) {
      try {
        comm.reduce_local(std::span<float>(mine), std::span<const float>(theirs), ReduceOp::kMax);
      } catch (const Error& e) {
        message = e.what();
      }
      std::this_thread::yield();
    }
    EXPECT_NE(message.find("reduce_local on rank 0 of group 'world'"), std::string::npos)
        << message;
    EXPECT_NE(message.find("another thread is inside a call"), std::string::npos) << message;
    EXPECT_NE(message.find("one thread at a time"), std::string::npos) << message;
    EXPECT_NE(message.find("split()"), std::string::npos) << message;
    // A blocking collective is refused at once too, instead of mixing its messages with recv's.
    book::testing::expect_error([&] { comm.barrier(); },
                                {"barrier on rank 0", "another thread is inside a call"});
    refused = true;
    receiver.join();
    if (receiver_error) std::rethrow_exception(receiver_error);
    EXPECT_EQ(got, (std::vector<float>{1.5f, -2.25f, 3.0f}))
        << "the first thread's call must carry on undisturbed";
    comm.barrier();  // the receiver has left: this thread may use the communicator again
  });
}

TEST(ThreadSafety, TwoThreadsWithACommunicatorEachRunSideBySide) {
  // The documented pattern: split() gives the second thread its own communicator; both threads
  // then all-reduce at the same time, each in its own group, and both sums are right.
  constexpr int kRanks = 3, kRounds = 40;
  run_ranks(kRanks, [&](Communicator& comm) {
    std::unique_ptr<Communicator> side = comm.split(0, comm.rank());
    ASSERT_NE(side, nullptr);
    std::exception_ptr side_error;
    std::vector<float> side_sums;
    std::thread other([&] {
      try {
        for (int i = 0; i < kRounds; ++i) {
          std::vector<float> x = {static_cast<float>(10 * (comm.rank() + 1) + i)};
          side->all_reduce(std::span<float>(x), ReduceOp::kSum, Algorithm::kTree);
          side_sums.push_back(x[0]);
        }
      } catch (...) {
        side_error = std::current_exception();
      }
    });
    for (int i = 0; i < kRounds; ++i) {
      std::vector<float> y(37, static_cast<float>(comm.rank() + 1) * 0.5f + static_cast<float>(i));
      comm.all_reduce(std::span<float>(y), ReduceOp::kSum, Algorithm::kRing);
      const float expected = 0.5f * (1 + 2 + 3) + static_cast<float>(kRanks * i);
      EXPECT_EQ(y[36], expected) << "round " << i << " on rank " << comm.rank();
    }
    other.join();
    if (side_error) std::rethrow_exception(side_error);
    ASSERT_EQ(side_sums.size(), static_cast<std::size_t>(kRounds));
    for (int i = 0; i < kRounds; ++i)
      EXPECT_EQ(side_sums[i], static_cast<float>(10 * (1 + 2 + 3) + kRanks * i)) << "round " << i;
  });
}

}  // namespace
}  // namespace book::coll
