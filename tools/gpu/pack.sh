#!/usr/bin/env bash
# tools/gpu/pack.sh [OUT_DIR] — builds here, with Bazel, every `gpu`-tagged test and every
# `gpu_stage`-tagged binary, and the preflight probe, into one self-contained folder (default
# out/gpu) for a GPU machine that has a driver but no Bazel, no compiler and no network. Then copy
# the folder there and run OUT_DIR/run.sh. See tools/gpu/README.md.
#
# Shared libraries: cudart is linked statically; every other library a binary needs is shipped in
# lib/ if it is at most SHIP_MAX_MIB (default 16) — the C library family and the driver excepted.
# cuBLAS (libcublasLt alone is over 500 MiB) and NCCL (over 200 MiB) cannot be, and this toolkit
# has no static archive of either (only libcudart_static.a, libcudadevrt.a and libculibos.a):
# libs.tsv lists them as "expected", and run.sh's preflight looks for them on the GPU machine.
#
# Environment: BAZEL (default bazel), BAZEL_STARTUP_OPTS (e.g. "--output_base=/tmp/bazel_me"),
# BAZEL_BUILD_OPTS (extra build flags, e.g. "--config=exercises" to pack the reader's kernels),
# SHIP_MAX_MIB.
set -euo pipefail

root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
cd "$root"
out=${1:-out/gpu}
read -ra bazel_cmd <<<"${BAZEL:-bazel} ${BAZEL_STARTUP_OPTS:-}"
read -ra extra_build_opts <<<"${BAZEL_BUILD_OPTS:-}"
build_opts=(--dynamic_mode=off "${extra_build_opts[@]+"${extra_build_opts[@]}"}")  # static: no _solib .so files to carry
max_bytes=$((64 * 1024 * 1024))
ship_max_bytes=$((${SHIP_MAX_MIB:-16} * 1024 * 1024))
probe_label=//tools/gpu:probe

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

"${bazel_cmd[@]}" build --keep_going "${build_opts[@]}" "${tests[@]}" "${stages[@]}" "$probe_label" || \
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
pack_one probe "$probe_label"
for t in "${tests[@]}"; do pack_one test "$t"; done
for s in "${stages[@]}"; do pack_one stage "$s"; done

# Shared libraries: the C library family and the driver come from the GPU machine; anything else
# is shipped in lib/ (run.sh puts it first on LD_LIBRARY_PATH) when it is small enough, and
# recorded in libs.tsv either way: soname, shipped / fallback / expected, the binaries that need
# it, where it was here.
# The C++ runtime goes to lib/fallback: run.sh uses it only where the GPU machine's is older than
# this one (a newer one runs these binaries, and an older copy first on the path could break the
# machine's own tools and libraries that the steps load).
cxx_runtime='^(libstdc\+\+\.so|libgcc_s\.so)'
system='^(linux-vdso|ld-linux|libc\.|libm\.|libdl\.|librt\.|libpthread\.|libresolv\.|libutil\.|libcuda\.)'
declare -A needed_by=() found_at=()
for f in "$out"/bin/*; do
  while read -r lib _ path _; do
    [[ -z ${lib:-} || $lib =~ $system ]] && continue
    needed_by[$lib]+="${needed_by[$lib]:+,}$(basename "$f")"
    if [[ ${path:-} == "not" ]]; then found_at[$lib]="not found here"; continue; fi
    found_at[$lib]=$path
  done < <(ldd "$f" 2>/dev/null | sed 's/^[[:space:]]*//' | awk '$2 == "=>" {print $1, $2, $3, $4}')
done
printf '# soname\tstatus\tneeded by\tnote\n' >"$out/libs.tsv"
for lib in $(printf '%s\n' "${!needed_by[@]}" | sort); do
  path=${found_at[$lib]}
  if [[ $lib =~ $cxx_runtime && -f $path ]]; then
    mkdir -p "$out/lib/fallback"
    cp -L "$path" "$out/lib/fallback/$lib"
    printf '%s\tfallback\t%s\t%s\n' "$lib" "${needed_by[$lib]}" "$path" >>"$out/libs.tsv"
  elif [[ -f $path ]] && (($(stat -L -c %s "$path") <= ship_max_bytes)); then
    cp -L "$path" "$out/lib/$lib"
    printf '%s\tshipped\t%s\t%s\n' "$lib" "${needed_by[$lib]}" "$path" >>"$out/libs.tsv"
  elif [[ -f $path ]]; then
    size=$(($(stat -L -c %s "$path") / 1024 / 1024))
    printf '%s\texpected\t%s\t%s, %s MiB here: too big to ship\n' "$lib" "${needed_by[$lib]}" \
      "$path" "$size" >>"$out/libs.tsv"
  else
    say "WARNING: ${needed_by[$lib]} need $lib, not found here"
    printf '%s\texpected\t%s\tnot found here either\n' "$lib" "${needed_by[$lib]}" >>"$out/libs.tsv"
  fi
done

cp "$root/tools/gpu/run.sh" "$root/tools/gpu/plan.tsv" "$out/"
cp "$root/tools/gpu/README.md" "$out/README.md"
# Every binary the plan names must be in the pack, and every test filter must select a test (a
# renamed target or suite would otherwise cost a GPU run to find): listing tests needs no GPU.
plan_errors=0
while IFS=$'\t' read -r step binary _ _ _ _ _ args; do
  [[ -z $step || $step == \#* ]] && continue
  if ! awk -F'\t' -v b="$binary" '$2 == b {found = 1} END {exit !found}' "$manifest"; then
    say "ERROR: plan.tsv's step $step names $binary, which is not packed"
    plan_errors=$((plan_errors + 1))
    continue
  fi
  filter=$(grep -o -- '--gtest_filter=[^ ]*' <<<"$args" || true)
  [[ -n $filter ]] || continue
  matched=$("$out/bin/$binary" --gtest_list_tests "$filter" 2>/dev/null | grep -c '^  ' || true)
  if ((matched == 0)); then
    say "ERROR: plan.tsv's step $step: $filter selects no test of $binary"
    plan_errors=$((plan_errors + 1))
  fi
done <"$out/plan.tsv"
{
  echo "commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . ':!out' 2>/dev/null || echo ' (with uncommitted changes)')"
  echo "packed $(date -u +%Y-%m-%dT%H:%MZ) on $(uname -n), nvcc $(/usr/local/cuda/bin/nvcc --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\).*/\1/p')"
} >"$out/VERSION"

bytes=$(du -sb "$out" | cut -f1)
say "packed $(grep -c '^test' "$manifest") tests and $(grep -c '^stage' "$manifest") stages into $out: $((bytes / 1024 / 1024)) MiB"
awk -F'\t' '!/^#/ {print "pack: " $2 " " $1 " (" $4 "), for " $3}' "$out/libs.tsv" >&2
if ((${#missing[@]})); then say "NOT packed (failed to build): ${missing[*]}"; fi
if ((bytes > max_bytes)); then say "ERROR: $out is over 64 MiB"; exit 1; fi
((${#missing[@]} == 0 && plan_errors == 0))
