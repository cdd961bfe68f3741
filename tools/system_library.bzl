"""system_library: new_local_repository for a Debian package, with a check that it is installed.

A plain new_local_repository pointing at /usr builds fine until a header is missing, and then the
compiler's "cblas.h: No such file or directory" does not say what to install. This rule looks for
the package's key files first and fails with the package name and the fix.
"""

def _system_library_impl(ctx):
    for path in ctx.attr.required:
        if not ctx.path(path).exists:
            fail("book: %s is missing: Debian package '%s' is not installed: run `sudo tools/setup.sh`." % (path, ctx.attr.package))
    for entry in ctx.path("/usr").readdir():
        ctx.symlink(entry, entry.basename)
    ctx.file("BUILD", ctx.read(ctx.attr.build_file))
    ctx.file("WORKSPACE", "workspace(name = %r)\n" % ctx.name)

system_library = repository_rule(
    implementation = _system_library_impl,
    local = True,
    attrs = {
        "build_file": attr.label(mandatory = True, allow_single_file = True),
        "package": attr.string(mandatory = True, doc = "the Debian package that provides it"),
        "required": attr.string_list(mandatory = True, doc = "absolute paths that must exist"),
    },
)
