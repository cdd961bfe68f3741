"""mpi_test: GoogleTest cases run as N MPI processes under mpirun, inside `bazel test`."""

_MPI_MAIN = "//chapters/03_collectives/testing:mpi_main"

def mpi_test(name, srcs, deps = [], ranks = [2], main = _MPI_MAIN, size = "medium", tags = [], **kwargs):
    """Builds `srcs` into one test binary and runs it as N processes for each N in `ranks`: tests
    `<name>_np<N>`, and a test_suite `<name>` of them all. `deps` should bring the Communicator
    (:communicator) and //chapters/03_collectives:mpi_backend. main() comes from `main` (by
    default: MPI with MPI_THREAD_MULTIPLE, one XML report, failures printed with their rank);
    main = None when `srcs` has its own."""
    binary = name + "_binary"
    native.cc_binary(
        name = binary,
        testonly = True,
        srcs = srcs,
        deps = deps + ([main] if main else []) + [
            "//common:testing",
            "@gtest",
        ],
    )
    tests = []
    for np in ranks:
        test = "%s_np%d" % (name, np)
        native.sh_test(
            name = test,
            size = size,
            srcs = ["//chapters/03_collectives/testing:mpirun.sh"],
            args = [str(np), "$(location :%s)" % binary],
            data = [
                ":" + binary,
                "//tools/sanitizers:openmpi_lsan.supp",
                "//tools/sanitizers:openmpi_tsan.supp",
            ],
            tags = tags,
            **kwargs
        )
        tests.append(":" + test)
    native.test_suite(name = name, tests = tests, tags = tags)
