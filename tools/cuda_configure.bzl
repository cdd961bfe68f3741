"""Finds the CUDA toolkit (nvcc, cudart, cuBLAS, NCCL) and describes it as the @local_cuda repository.

Where there is no toolkit (most laptops), @local_cuda still exists, with CUDA_AVAILABLE = False: the
book's CUDA macros then mark their targets incompatible, so `bazel build //...` and
`bazel test //...` skip them and build everything else. Set CUDA_PATH to use a toolkit that is not
in /usr/local/cuda.
"""

def _cuda_configure_impl(ctx):
    cuda_path = ctx.os.environ.get("CUDA_PATH", "/usr/local/cuda")
    nvcc = ctx.path(cuda_path + "/bin/nvcc")
    available = nvcc.exists
    if available:
        ctx.symlink(cuda_path + "/include", "include")
        ctx.symlink(cuda_path + "/lib64", "lib64")
        has_nccl = ctx.path(cuda_path + "/include/nccl.h").exists
        build = ctx.read(ctx.attr._build_available)
        if not has_nccl:
            print("book: CUDA at %s has no NCCL; NCCL targets will not link." % cuda_path)
    else:
        print("book: no CUDA toolkit at %s (set CUDA_PATH to another); CUDA targets are skipped." % cuda_path)
        has_nccl = False
        build = ctx.read(ctx.attr._build_missing)
    ctx.file("BUILD", build)
    ctx.file("defs.bzl", "\n".join([
        "# Written by tools/cuda_configure.bzl.",
        "CUDA_AVAILABLE = %s" % available,
        "NCCL_AVAILABLE = %s" % has_nccl,
        "CUDA_PATH = %r" % cuda_path,
        "NVCC = %r" % str(nvcc),
        "",
    ]))

cuda_configure = repository_rule(
    implementation = _cuda_configure_impl,
    environ = ["CUDA_PATH"],
    local = True,
    attrs = {
        "_build_available": attr.label(default = "//third_party:cuda.BUILD"),
        "_build_missing": attr.label(default = "//third_party:cuda_missing.BUILD"),
    },
)
