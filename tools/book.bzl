"""Macros that give every chapter the same shape: a track alias, graded tests, GPU tests."""

load("@rules_cc//cc:defs.bzl", "cc_test")
load("//tools:cuda.bzl", "CUDA_COMPATIBLE")

def track(name, solution, exercise, visibility = None):
    """An alias to the reference implementation, or to the reader's with --config=exercises."""
    native.alias(
        name = name,
        actual = select({
            "//tools:exercises_track": exercise,
            "//conditions:default": solution,
        }),
        visibility = visibility,
    )

def _chapter_catalog():
    """The catalog of the chapter whose graded tests this package holds: tests/NN_slug/... ->
    //tests/NN_slug:exercises.txt."""
    parts = native.package_name().split("/")
    if len(parts) < 2 or parts[0] != "tests":
        fail("exercise_test belongs in tests/NN_slug/, not in " + native.package_name())
    return "//tests/%s:exercises.txt" % parts[1]

def exercise_test(name, srcs, deps = [], tags = [], data = [], **kwargs):
    """A graded test: every test case in it must use EXERCISE_TEST (the teeth check verifies that
    none passes against the stubs). Its main (//common:exercise_main) names the failing exercise,
    caps repeated failures, exits with status 1 while an exercise is not started, and fails when
    an exercise it grades has no entry in tests/NN_slug/exercises.txt that lists this test."""
    cc_test(
        name = name,
        srcs = srcs,
        deps = deps + ["//common:testing", "//common:exercise_main"],
        data = data + [_chapter_catalog()],
        tags = tags + ["exercise"],
        # Static, so that a test linking both tracks of a chapter fails to link ("multiple
        # definition"): the solutions/ and exercises/ libraries are alwayslink.
        linkstatic = kwargs.pop("linkstatic", True),
        **kwargs
    )

def book_test(name, srcs, deps = [], **kwargs):
    """A test of scaffolding (argument checks, invariants, tools) rather than of an exercise."""
    cc_test(
        name = name,
        srcs = srcs,
        deps = deps + ["//common:testing", "@gtest//:gtest_main"],
        # Static for the same reason as exercise_test: mixing two tracks must fail to link.
        linkstatic = kwargs.pop("linkstatic", True),
        **kwargs
    )

def gpu_test(name, srcs, deps = [], tags = [], **kwargs):
    """A test that needs a CUDA device: skipped (with a message) where there is none, left out of
    the build where there is no CUDA toolkit, and packed by tools/gpu/pack.sh for a GPU machine."""
    cc_test(
        name = name,
        srcs = srcs,
        deps = deps + ["//common:testing_gpu", "@gtest//:gtest_main"],
        tags = tags + ["gpu"],
        # cudart is a static archive: linked into shared libraries of deps its symbols would not
        # resolve, so GPU tests link everything statically (which pack.sh wants anyway).
        linkstatic = kwargs.pop("linkstatic", True),
        target_compatible_with = CUDA_COMPATIBLE,
        **kwargs
    )
