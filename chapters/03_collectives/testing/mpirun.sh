#!/bin/sh
# Runs a test binary as N MPI processes: mpirun.sh N BINARY. Inside `bazel test` the sandbox has
# no writable /tmp and a private /dev/shm, so OpenMPI's session directory and the shared-memory
# segments of its vader transport go under the test's own TEST_TMPDIR.
set -eu
np="$1"
binary="$2"
shift 2
export TMPDIR="${TEST_TMPDIR:-${TMPDIR:-/tmp}}"
export OMPI_MCA_btl="self,vader"
export OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_MCA_btl_vader_backing_directory="$TMPDIR"
export OMPI_MCA_rmaps_base_oversubscribe=1
exec mpirun -np "$np" --oversubscribe --allow-run-as-root "$binary" "$@"
