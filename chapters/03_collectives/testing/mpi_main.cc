// The main() of a GoogleTest binary that runs as N MPI processes (see mpi.bzl): MpiSession starts
// MPI, rank 0
// writes the one XML report and prints as usual, the other ranks print only their failures, each
// with its rank, and every process exits 1 if any rank failed, so mpirun's status is the test's.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "chapters/03_collectives/mpi.h"

namespace {

class FailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit FailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (result.failed())
      std::printf("[rank %d] %s:%d: %s\n", rank_, result.file_name() ? result.file_name() : "?",
                  result.line_number(), result.message());
  }

 private:
  int rank_;
};

}  // namespace

int main(int argc, char** argv) {
  book::coll::MpiSession mpi(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {  // one XML report (rank 0's); the others print only failures
    unsetenv("XML_OUTPUT_FILE");
    unsetenv("GTEST_OUTPUT");
    unsetenv("TEST_PREMATURE_EXIT_FILE");
  }
  ::testing::InitGoogleTest(&argc, argv);
  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new FailurePrinter(rank));
  }
  const int failed = RUN_ALL_TESTS();
  int any_failed = 0;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return any_failed ? 1 : 0;
}
