/// @file
/// The usual start of the NCCL backend: MPI processes, one per GPU. Rank 0 makes the unique id,
/// MPI_Bcast gives it to every process, and each process takes the GPU of its node-local rank.
#pragma once

#include <memory>

#include "chapters/03_collectives/mpi.h"
#include "chapters/03_collectives/nccl.h"

namespace book::coll {

/// Joins every process of `mpi` into one NCCL communicator, each on GPU (node-local rank).
/// @throws book::Error before NCCL is touched when a host runs more ranks than it has GPUs
///   (nccl_device_for()), or has none.
std::unique_ptr<NcclCommunicator> nccl_over_mpi(MpiCommunicator& mpi);

}  // namespace book::coll
