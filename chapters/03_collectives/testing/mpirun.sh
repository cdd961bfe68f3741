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
# Under --config=asan: OpenMPI's own never-freed globals are not the book's leaks
# (tools/sanitizers/openmpi_lsan.supp names only OpenMPI frames). Harmless without ASan.
supp="${TEST_SRCDIR:-}/${TEST_WORKSPACE:-}/tools/sanitizers/openmpi_lsan.supp"
# Suppressions match frames by library name, so the leak reports need whole stacks (the slow
# unwinder: OpenMPI is built without frame pointers) and OpenMPI's plugins must stay loaded until
# exit (else their frames read "<unknown module>").
if [ -f "$supp" ]; then
  export LSAN_OPTIONS="suppressions=$supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
  export ASAN_OPTIONS="fast_unwind_on_malloc=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
  export OMPI_MCA_mca_base_component_disable_dlclose=1
fi
# Under --config=tsan: races one of whose accesses OpenMPI itself made, where TSan cannot see
# OpenMPI's own ordering (tools/sanitizers/openmpi_tsan.supp). Harmless without TSan.
tsan_supp="${TEST_SRCDIR:-}/${TEST_WORKSPACE:-}/tools/sanitizers/openmpi_tsan.supp"
if [ -f "$tsan_supp" ]; then
  export TSAN_OPTIONS="suppressions=$tsan_supp${TSAN_OPTIONS:+:$TSAN_OPTIONS}"
  export OMPI_MCA_mca_base_component_disable_dlclose=1
fi
exec mpirun -np "$np" --oversubscribe --allow-run-as-root "$binary" "$@"
