#include "chapters/03_collectives/nccl_mpi.h"

#include <string>

#include "common/check.h"
#include "common/cuda.h"

namespace book::coll {

std::unique_ptr<NcclCommunicator> nccl_over_mpi(MpiCommunicator& mpi) {
  // The node-local rank and how many ranks share this node: split the group by shared memory.
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(mpi.mpi_comm(), MPI_COMM_TYPE_SHARED, mpi.rank(), MPI_INFO_NULL, &node);
  int local_rank = 0, local_ranks = 1;
  MPI_Comm_rank(node, &local_rank);
  MPI_Comm_size(node, &local_ranks);
  MPI_Comm_free(&node);
  const int devices = cuda::device_count();
  int device = 0;
  std::string problem;
  try {
    device = nccl_device_for(local_rank, local_ranks, devices);
  } catch (const Error& e) {
    problem = e.what();
    if (devices == 0) problem += " (" + cuda::no_device_reason() + ")";
  }
  // Every rank learns whether any host is short of GPUs, so none waits in MPI_Bcast for a rank 0
  // that has already given up.
  int ok = problem.empty() ? 1 : 0, all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, mpi.mpi_comm());
  BOOK_CHECK(ok, "rank " << mpi.rank() << ": " << problem);
  BOOK_CHECK(all_ok, "rank " << mpi.rank()
                             << ": another host has fewer GPUs than ranks (its ranks say so); "
                                "NCCL was not started");
  NcclId id{};
  if (mpi.rank() == 0) id = nccl_unique_id();
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, mpi.mpi_comm());
  return std::make_unique<NcclCommunicator>(mpi.rank(), mpi.size(), id, device, "nccl");
}

}  // namespace book::coll
