// Scaffolding: under MPI_THREAD_FUNNELED only the main thread may call MPI, so AsyncCommunicator
// (whose thread calls MPI) refuses, saying what to do. Its own main(): MPI started FUNNELED.
#include <gtest/gtest.h>

#include "chapters/03_collectives/async.h"
#include "chapters/03_collectives/mpi.h"
#include "chapters/03_collectives/testing/collective_testing.h"
#include "common/testing/expect_error.h"

namespace book::coll {
namespace {

TEST(MpiFunneled, NonBlockingCollectivesAreRefusedWithTheReason) {
  MpiCommunicator comm;
  book::testing::expect_error(
      [&] { AsyncCommunicator async(comm); },
      {"AsyncCommunicator on group 'world'", "MPI runs with MPI_THREAD_FUNNELED",
       "needs MPI_THREAD_MULTIPLE", "MpiSession(&argc, &argv)"});
  comm.barrier();  // the refusal happened before any message: the group still works
}

}  // namespace
}  // namespace book::coll

int main(int argc, char** argv) {
  book::coll::MpiSession mpi(&argc, &argv, book::coll::MpiThreads::kFunneled);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
