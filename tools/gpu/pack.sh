#!/usr/bin/env bash
# tools/gpu/pack.sh [OUT_DIR] — builds here, with Bazel, every `gpu`-tagged test and every
# `gpu_stage`-tagged binary into one self-contained folder (default out/gpu) for a GPU machine
# that has CUDA but no Bazel, no compiler and no network. Then copy the folder there and run
# OUT_DIR/run.sh. See tools/gpu/README.md.
#
# Environment: BAZEL (default bazel), BAZEL_STARTUP_OPTS (e.g. "--output_base=/tmp/bazel_me"),
# BAZEL_BUILD_OPTS (extra build flags, e.g. "--config=exercises" to pack the reader's kernels).
set -euo pipefail

root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
cd "$root"
out=${1:-out/gpu}
bazel_cmd=(${BAZEL:-bazel} ${BAZEL_STARTUP_OPTS:-})
build_opts=(--dynamic_mode=off ${BAZEL_BUILD_OPTS:-})  # static: no _solib .so files to carry
max_bytes=$((64 * 1024 * 1024))

say() { echo "pack: $*" >&2; }

# Other chapters may be mid-edit: --keep_going lists what loads, and a target that fails to build
# is reported and left out instead of sinking the whole pack.
query() {
  "${bazel_cmd[@]}" query --keep_going --noshow_progress "$1" 2>/dev/null || true
}
# The book's own folders, not //...: a bazel-* convenience symlink or a broken root BUILD must not
# make the query skip everything.
universe="//chapters/... + //tests/... + //common/..."
mapfile -t tests < <(query "attr(tags, '[\[ ,]gpu[,\]]', tests($universe))" | grep '^//' | sort -u)
mapfile -t stages < <(query "attr(tags, '[\[ ,]gpu_stage[,\]]', kind(cc_binary, $universe))" | grep '^//' | sort -u)
((${#tests[@]} + ${#stages[@]} > 0)) || { say "no gpu-tagged targets found"; exit 1; }
say "${#tests[@]} GPU tests, ${#stages[@]} GPU stages"

"${bazel_cmd[@]}" build --keep_going "${build_opts[@]}" "${tests[@]}" "${stages[@]}" || \
  say "some targets failed to build (listed below); packing the rest"
bin=$("${bazel_cmd[@]}" info "${build_opts[@]}" bazel-bin 2>/dev/null)

rm -rf "$out"
mkdir -p "$out/bin" "$out/lib" "$out/runfiles"
manifest="$out/manifest.tsv"
printf '# kind\tname\tlabel\n' >"$manifest"
missing=()

pack_one() {  # kind label
  local kind=$1 label=$2 pkg name flat file
  pkg=${label#//}; pkg=${pkg%%:*}; name=${label##*:}
  flat=$(echo "${pkg}__${name}" | tr '/' '_')
  file="$bin/$pkg/$name"
  if [[ ! -x $file ]]; then missing+=("$label"); return; fi
  cp -L "$file" "$out/bin/$flat"
  # Data files from the runfiles tree (not the binary itself, not shared libraries).
  local rf="$file.runfiles"
  if [[ -d $rf ]]; then
    (cd "$rf" && find -L . -type f ! -name '*.so*' ! -path "*/$pkg/$name" -print0) |
      while IFS= read -r -d '' f; do
        mkdir -p "$out/runfiles/$flat/$(dirname "$f")"
        cp -L "$rf/$f" "$out/runfiles/$flat/$f"
      done
  fi
  printf '%s\t%s\t%s\n' "$kind" "$flat" "$label" >>"$manifest"
}
for t in "${tests[@]}"; do pack_one test "$t"; done
for s in "${stages[@]}"; do pack_one stage "$s"; done

# Shared libraries: the C library family and the driver come from the GPU machine; cuBLAS and
# NCCL (hundreds of MiB) from its CUDA toolkit via the rpath /usr/local/cuda/lib64; anything else
# a binary needs is shipped in lib/ (run.sh puts it on LD_LIBRARY_PATH).
system='^(linux-vdso|ld-linux|libc\.|libm\.|libdl\.|librt\.|libpthread\.|libresolv\.|libutil\.)'
for f in "$out"/bin/*; do
  while read -r lib _ path _; do
    [[ -z ${lib:-} || $lib =~ $system ]] && continue
    if [[ ${path:-} == "not" ]]; then say "WARNING: $(basename "$f") needs $lib, not found here"; continue; fi
    [[ ${path:-} == /usr/local/cuda* || ${path:-} == */cuda*/lib64/* ]] && continue
    [[ -f ${path:-} && ! -f $out/lib/$lib ]] && cp -L "$path" "$out/lib/$lib"
  done < <(ldd "$f" 2>/dev/null | sed 's/^[[:space:]]*//' | awk '{print $1, $2, $3, $4}')
done

cp "$root/tools/gpu/run.sh" "$out/run.sh"
cp "$root/tools/gpu/README.md" "$out/README.md"
{
  echo "commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . ':!out' 2>/dev/null || echo ' (with uncommitted changes)')"
  echo "packed $(date -u +%Y-%m-%dT%H:%MZ) on $(uname -n), nvcc $(/usr/local/cuda/bin/nvcc --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\).*/\1/p')"
} >"$out/VERSION"

bytes=$(du -sb "$out" | cut -f1)
say "packed $(grep -c '^test' "$manifest") tests and $(grep -c '^stage' "$manifest") stages into $out: $((bytes / 1024 / 1024)) MiB"
ls "$out/lib" | sed 's/^/pack: shipped lib: /' >&2 || true
if ((${#missing[@]})); then say "NOT packed (failed to build): ${missing[*]}"; fi
if ((bytes > max_bytes)); then say "ERROR: $out is over 64 MiB"; exit 1; fi
((${#missing[@]} == 0))
