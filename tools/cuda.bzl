"""cuda_library: compiles .cu files with nvcc into a cc_library.

Each .cu becomes one object through a genrule that calls the toolkit's nvcc (found by
tools/cuda_configure.bzl) for sm_80 and sm_90 machine code plus compute_90 PTX, so the same binary
runs on an A100, an H100/H200, and (through the PTX) anything newer. Without a toolkit every target
made here is incompatible and `bazel build //...` skips it.
"""

load("@local_cuda//:defs.bzl", "CUDA_AVAILABLE", "NVCC")

CUDA_COMPATIBLE = [] if CUDA_AVAILABLE else ["@platforms//:incompatible"]

_GENCODE = [
    "-gencode=arch=compute_80,code=sm_80",
    "-gencode=arch=compute_90,code=sm_90",
    "-gencode=arch=compute_90,code=compute_90",
]

def cuda_library(name, srcs, hdrs = [], cu_hdrs = [], deps = [], nvcc_flags = [], gencode = None, **kwargs):
    """A cc_library whose sources are .cu files.

    Args:
      name: the library.
      srcs: .cu files, one object each.
      hdrs: public headers of the library (also visible to nvcc).
      cu_hdrs: other headers the .cu files include (nvcc sees only what is listed).
      deps: cc_library dependencies for the link.
      nvcc_flags: extra nvcc flags, e.g. ["-Xptxas=-v"].
      gencode: replaces the default architectures, e.g. for sm_90a-only Hopper kernels.
      **kwargs: passed to the cc_library (visibility, tags, ...).
    """
    objects = []
    for src in srcs:
        obj = "_objs/%s/%s" % (name, src.replace(".cu", ".o"))
        native.genrule(
            name = "%s_%s_nvcc" % (name, src.replace("/", "_").replace(".", "_")),
            srcs = [src] + hdrs + cu_hdrs,
            outs = [obj],
            cmd = " ".join([
                NVCC,
                "-std=c++20 -O3 -lineinfo -ccbin /usr/bin/g++",
                "-Xcompiler=-fPIC,-march=x86-64-v3",
                "-I. -I$(GENDIR)",
                " ".join(gencode if gencode != None else _GENCODE),
                " ".join(nvcc_flags),
                "-c $(location %s) -o $@" % src,
            ]),
            target_compatible_with = CUDA_COMPATIBLE,
            tags = ["cuda"],
            message = "nvcc " + src,
        )
        objects.append(obj)
    native.cc_library(
        name = name,
        srcs = objects,
        hdrs = hdrs,
        deps = deps + ["@local_cuda//:cudart"],
        target_compatible_with = CUDA_COMPATIBLE,
        **kwargs
    )
