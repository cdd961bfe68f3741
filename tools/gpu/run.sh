#!/usr/bin/env bash
# run.sh [PACKED_DIR] — runs what tools/gpu/pack.sh packed, on a machine with a GPU and no Bazel:
# a preflight of about a second (driver, runtime, the GPU, every binary's shared libraries), then
# the steps of plan.tsv in order, likeliest failures first, each its own process with its own time
# limit, then any packed binary the plan does not name. It prints one Markdown report (also
# written to results/report.md): the preflight, a table of steps filled in as they finish, each
# failure with the end of its log and diagnosis hints, and the stages' own output. The whole run
# keeps within RUN_BUDGET seconds; what it did not get to is listed as "not run (budget)".
#
# run.sh --explain HINT STATUS LOG — the diagnosis hints for a saved step log (HINT is plan.tsv's
# column: simt, mma, wmma, hopper, nccl, stage, race, sync, memcheck; STATUS its exit status).
#
# Exit status: 0 every step ran and passed; 1 a step failed, timed out, could not run or was not
# reached; 3 no usable GPU (every step skipped); 2 bad usage.
#
# Environment (see tools/gpu/README.md): RUN_BUDGET (seconds for the whole run, default 360),
# STEP_TIMEOUT (caps every step's limit), STEPS (comma-separated step names: run only those),
# STAGE_ARGS (for the stages, e.g. --tour), BOOK_RESULTS_DIR (logs; default DIR/results/<time>),
# BOOK_LIB_PATH (more folders to look for shared libraries in), COMPUTE_SANITIZER (its path).
set -uo pipefail

# ---- diagnosis hints

explain() {  # HINT STATUS LOG...: prints "- hint" lines for a failed step
  local class=$1 status=$2
  shift 2
  local logs=("$@") said=0
  hint() {
    echo "- $*"
    said=1
  }
  has() { cat "${logs[@]}" 2>/dev/null | grep -qE -- "$1"; }
  local timed_out=0
  ((status == 124 || status == 137)) && timed_out=1

  # The machine, before the code: these explain every failure after them.
  has 'error while loading shared libraries|cannot open shared object file' &&
    hint "a shared library is missing on this machine: the preflight's library rows say which; put its folder in BOOK_LIB_PATH"
  has 'symbol lookup error|undefined symbol' &&
    hint "a library found on this machine is older than the one the binary was built against (VERSION names the build's nvcc; NCCL's headers were 2.28): use a newer one through BOOK_LIB_PATH"
  has 'cudaErrorInsufficientDriver|driver version is insufficient' &&
    hint "the driver is older than the CUDA 13 runtime linked into the binaries: the preflight's driver row; nothing in the book can fix that"
  has 'cudaErrorNoKernelImageForDevice|no kernel image is available' &&
    hint "no machine code or PTX for this GPU: the binaries carry sm_80, sm_90 and compute_90 PTX (rung 10: sm_90a only)"
  has 'cudaErrorIllegalAddress|illegal memory access' &&
    hint "a kernel read or wrote out of bounds; the error is sticky, so every later CUDA call in that process failed too: the memcheck step, or compute-sanitizer --tool memcheck on this step's command, names the kernel and line"
  has 'cudaErrorMisalignedAddress|misaligned address' &&
    hint "a 16-byte access (float4, cp.async, ldmatrix, TMA) at an address that is not a multiple of 16: a wide path taken for rows whose length is not a multiple of 4 floats / 8 BF16 (chunk_kind, wgmma_tma_unsupported)"
  has 'cudaErrorInvalidConfiguration|invalid configuration argument' &&
    hint "a launch asked for more threads per block than 1024, or a grid dimension over its limit: the launcher's dim3"
  has 'cudaErrorLaunchOutOfResources|too many resources requested' &&
    hint "registers x threads per block exceed the SM's register file: the ladder's resource report (ptxas -v) gives the kernel's registers"
  has 'cudaFuncSetAttribute.*failed' &&
    hint "the dynamic shared memory asked for is over the GPU's opt-in limit (227 KiB on Hopper): kSmemBytes / kPipelineSmemBytes"
  has 'cudaErrorIllegalInstruction|illegal instruction' &&
    hint "an instruction this GPU cannot run: sm_90a code (wgmma, setmaxnreg) on another GPU, or wgmma issued by a warpgroup that is not 4 aligned warps"

  # The pattern of wrong elements (chapters/02_gemm_cuda/error_pattern.h), read per rung.
  if has '\[right half of tile only\]'; then
    case $class in
      hopper) hint "only columns >= 64 of each 128-column tile are wrong: the second B box, read through the B descriptor's leading-dimension byte offset (LBO = kBSlabBytes = 8192, wgmma_b_descriptor) or fetched at the wrong column (wgmma_b_box_col)" ;;
      *) hint "only the right half of each tile is wrong: the second half of the B tile (its load offset, or the warps/lanes that cover it)" ;;
    esac
  fi
  if has '\[whole 8x8 groups\]'; then
    case $class in
      hopper) hint "errors in whole 8-row x 8-column groups: 16-byte chunks of 8 rows read from the wrong place, the 128-byte swizzle's signature: the descriptors' swizzle mode (1 = 128 B) against TMA's CU_TENSOR_MAP_SWIZZLE_128B, or a stage not on a 1024-byte boundary" ;;
      mma) hint "errors in whole 8x8 groups: one 8x8 matrix of an ldmatrix.x4 / mma.m16n8k16 fragment taken from the wrong place: the lane-to-row addresses of ldmatrix, the .trans for B, or the padded row stride (kLdA / kLdB)" ;;
      wmma) hint "errors in whole 8x8 groups: the WMMA fragments' layout (row_major / col_major) or the leading dimension given to load_matrix_sync / store_matrix_sync" ;;
      *) hint "errors in whole 8x8 groups: a vector (float4) load or store moved by a whole chunk: the chunk's row/column in the cooperative load map" ;;
    esac
  fi
  has '\[unwritten\]' &&
    hint "some elements of C were never written (the NaN poison survived): the grid does not cover C, a block returns early, or a store mask is too strict"
  has '\[edge tiles only\]' &&
    hint "only the tiles that stick out of C are wrong: the masks at ragged m, n or k (zero fill on the way in, masked stores on the way out)"
  has '\[all wrong\]' &&
    hint "every element is wrong: the kernel computes something else entirely (an operand's layout, a transposed fragment, a K loop that stops early); compare one element by hand against the first wrong one"
  has '\[whole rows\]' &&
    hint "whole rows of C are wrong: the A side (A's tile load or row index; on tensor cores the A fragment or descriptor)"
  has '\[whole columns\]' &&
    hint "whole columns of C are wrong: the B side (B's tile load or column index; on tensor cores the B fragment or descriptor)"

  # Hangs and sanitizer reports, by step.
  if ((timed_out)); then
    case $class in
      hopper) hint "rung 10 hung: an mbarrier phase never completed. First suspect the expected-bytes count: arrive.expect_tx announces kStageABytes + b_slabs x kBSlabBytes per stage, and TMA must deliver exactly that (whole boxes, zero fill included): a box it delivers short, or a B box skipped but counted, leaves the phase open forever. Then the parities (wgmma_full_parity / wgmma_empty_parity; wgmma_ring_test checks them on the CPU)" ;;
      mma) hint "rung 9 hung or crawled: a cp.async.wait_group that waits for a group never committed, or a __syncthreads some threads skip" ;;
      nccl) hint "an NCCL call never finished: rerun with NCCL_DEBUG=INFO (STEPS=nccl); in a VM with no network interface NCCL's bootstrap may need NCCL_SOCKET_IFNAME=lo" ;;
      race | sync | memcheck) hint "the sanitizer makes kernels 10 to 100 times slower: rerun this step alone with a longer limit (STEPS=$class... STEP_TIMEOUT=300)" ;;
      stage) hint "the stage ran past its limit: the last '[ladder] ...' line on its stderr names the rung it was running; rerun with --skip=that,rung or STAGE_ARGS=--tour" ;;
      *) hint "it hung or ran past its limit: a kernel whose loop never ends, or a __syncthreads inside a branch some threads skip (the synccheck step)" ;;
    esac
  fi
  has 'RACECHECK SUMMARY: [1-9]|[Hh]azard' &&
    hint "racecheck found shared-memory hazards: a missing __syncthreads between writing a tile and reading it, or before overwriting it for the next K step; the report names the kernel and line (the kernels are built with -lineinfo)"
  [[ $class == sync ]] && has 'ERROR SUMMARY: [1-9]' &&
    hint "synccheck: a barrier reached by only some threads of a block (a __syncthreads inside a divergent branch or an early return), or a bad __syncwarp mask"
  [[ $class == memcheck ]] && has 'ERROR SUMMARY: [1-9]' &&
    hint "memcheck: out-of-bounds or misaligned accesses; the report names the kernel, the address and the line. On rung 10 look at the epilogue's masks and the tensor maps' extents"
  if [[ $class == nccl ]]; then
    has 'ncclCommInitRank failed' &&
      hint "NCCL could not start: rerun with NCCL_DEBUG=INFO; 'unhandled system error' in a VM is often the bootstrap socket (NCCL_SOCKET_IFNAME=lo) or shared memory (NCCL_SHM_DISABLE=1)"
    has 'invalid usage' &&
      hint "ncclInvalidUsage: two ranks on one GPU, or ranks whose calls do not match"
    has 'libnccl' &&
      hint "NCCL's library: the pack does not carry it (over 200 MiB); the preflight looks in the CUDA toolkit, the loader's cache and Python's nvidia-* packages (PyTorch's nvidia-nccl-cu13 has one)"
  fi
  has 'cuTensorMapEncodeTiled failed' &&
    hint "the tensor map was refused: a base address not 16-byte aligned, a row stride not a multiple of 16 bytes, or a box over 256 elements a side"
  ((said)) || hint "no known signature: read the first failure above; the full logs are in the results folder"
  return 0
}

if [[ ${1:-} == --explain ]]; then
  (($# >= 4)) || { echo "usage: run.sh --explain HINT STATUS LOG..." >&2; exit 2; }
  explain "${@:2}"
  exit 0
fi

# ---- where things are

here=$(cd "$(dirname "$0")" && pwd)
if [[ $# -ge 1 ]]; then
  dir=$(cd "$1" 2>/dev/null && pwd) || { echo "run: no folder $1" >&2; exit 2; }
elif [[ -f $here/manifest.tsv ]]; then
  dir=$here
else
  dir=$(cd "$here/../.." && pwd)/out/gpu
fi
[[ -f $dir/manifest.tsv ]] || { echo "run: no manifest.tsv in $dir: run tools/gpu/pack.sh first" >&2; exit 2; }
plan=$dir/plan.tsv
[[ -f $plan ]] || plan=$here/plan.tsv

budget=${RUN_BUDGET:-360}
run_start=$(date +%s)
elapsed() { echo $(($(date +%s) - run_start)); }
results=${BOOK_RESULTS_DIR:-$dir/results/$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$results"
export BOOK_RESULTS_DIR=$results
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}  # NCCL's warnings land in the step's log
export LD_LIBRARY_PATH="$dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
details=$results/.details.md
: >"$details"

# The report goes to stdout and to results/report.md as it is written.
exec 3>&1
exec > >(tee "$results/report.md" >&3)
tee_pid=$!

manifest_names() { awk -F'\t' -v k="$1" '$1 == k {print $2}' "$dir/manifest.tsv"; }
kind_of() { awk -F'\t' -v n="$1" '$2 == n {print $1; exit}' "$dir/manifest.tsv"; }

# Each binary runs where `bazel run` would run it: in its runfiles tree (data files are there).
workdir() {
  local wd="$dir/runfiles/$1"
  [[ -d $wd/llm_infra_book ]] && wd=$wd/llm_infra_book
  [[ -d $wd ]] || wd=$dir
  echo "$wd"
}

echo "# GPU report"
echo
echo "- packed: $(paste -sd';' "$dir/VERSION" 2>/dev/null | sed 's/;/; /g')"
echo "- ran: $(date -u +%Y-%m-%dT%H:%MZ) on $(uname -n), budget ${budget} s"
echo

# ---- preflight

row() { echo "| $1 | $2 |"; }

# Folders where a shared library missing from the pack may be on this machine: BOOK_LIB_PATH, the
# CUDA toolkit, the loader's cache, and last (asking Python costs a second) Python's nvidia-*
# wheels: PyTorch's environment carries cuBLAS and NCCL.
toolkit_lib_dirs() {
  local d extra=${BOOK_LIB_PATH:-}
  for d in ${extra//:/ } /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib \
    /usr/local/cuda-*/lib64 /usr/local/nvidia/lib64 /usr/lib/x86_64-linux-gnu /usr/local/lib; do
    [[ -d $d ]] && echo "$d"
  done
}
python_lib_dirs() {  # the usual places first; then (a second or more) Python itself
  local sp
  {
    ls -d /opt/*/.venv/lib/python3*/site-packages /opt/*/lib/python3*/site-packages \
      /usr/local/lib/python3*/dist-packages /usr/lib/python3/dist-packages 2>/dev/null
    [[ ${1:-} == --ask-python ]] && command -v python3 >/dev/null 2>&1 &&
      timeout 10 python3 -c 'import site; print("\n".join(site.getsitepackages() + [site.getusersitepackages()]))' 2>/dev/null
  } | sort -u | while read -r sp; do
    ls -d "$sp"/nvidia/*/lib "$sp"/nvidia/*/lib64 2>/dev/null
  done
}

find_lib() {  # SONAME: the folder that has it, or nothing
  local name=$1 d
  while read -r d; do
    [[ -e $d/$name ]] && { echo "$d"; return; }
  done < <(toolkit_lib_dirs)
  d=$(ldconfig -p 2>/dev/null | awk -v n="$name" '$1 == n {print $NF; exit}')
  [[ -n $d ]] && { dirname "$d"; return; }
  local ask
  for ask in "" --ask-python; do
    [[ -f $results/.python_lib_dirs$ask ]] || python_lib_dirs $ask >"$results/.python_lib_dirs$ask"
    while read -r d; do
      [[ -e $d/$name ]] && { echo "$d"; return; }
    done <"$results/.python_lib_dirs$ask"
  done
  # Last, a bounded search of the usual roots.
  d=$(timeout 5 find /opt /usr/local /usr/lib -name "$name" -print -quit 2>/dev/null)
  [[ -n $d ]] && dirname "$d"
}

# What `ldd` cannot resolve for a binary: "libfoo.so.1" lines, and "version `X' not found" ones.
unresolved() {
  ldd "$1" 2>&1 | awk '/=> not found/ {print $1} /version .* not found/ {sub(/^[^:]*: /, ""); print}'
}

declare -A cannot_run=()
preflight() {
  local probe_out smi gpu_listed=0 t0=$SECONDS
  echo "## Preflight"
  echo
  echo "| check | result |"
  echo "|---|---|"
  if command -v nvidia-smi >/dev/null 2>&1; then
    smi=$(timeout 15 nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total \
      --format=csv,noheader 2>&1 | paste -sd';')
    row "nvidia-smi (name, compute capability, driver, memory)" "${smi:-nothing}"
    [[ -n $smi && $smi != *[Ff]ailed* && $smi != *"No devices"* ]] && gpu_listed=1
  else
    row "nvidia-smi" "not found"
  fi

  local probe
  probe=$(manifest_names probe | head -1)
  gpus=0
  no_gpu_reason="the pack has no probe (tools/gpu/pack.sh packs one)"
  if [[ -n $probe ]]; then
    probe_out=$(cd "$dir" && timeout 30 "$dir/bin/$probe" 2>&1)
    local status=$?
    row "CUDA driver" "$(sed -n 's/^driver: //p' <<<"$probe_out")"
    row "CUDA runtime (linked into the binaries)" "$(sed -n 's/^runtime: //p' <<<"$probe_out")"
    gpus=$(sed -n 's/^devices: \([0-9]*\).*/\1/p' <<<"$probe_out")
    gpus=${gpus:-0}
    if ((gpus > 0)); then
      row "devices" "$(grep '^device ' <<<"$probe_out" | sed 's/^device //' | paste -sd';')"
    else
      no_gpu_reason=$(sed -n 's/^devices: 0 (\(.*\))$/\1/p' <<<"$probe_out")
      [[ -n $no_gpu_reason ]] || no_gpu_reason="the probe failed (exit $status): $(tail -2 <<<"$probe_out" | paste -sd' ')"
      row "devices" "none: $no_gpu_reason"
    fi
    grep '^warning: ' <<<"$probe_out" | while read -r w; do row "**warning**" "${w#warning: }"; done
  else
    row "devices" "unknown: $no_gpu_reason"
  fi
  cuda_unusable=0
  ((gpus == 0 && gpu_listed)) && cuda_unusable=1

  # Libraries: every packed binary's, with lib/ first. The C++ runtime (lib/fallback) is used
  # only where this machine's is older than the build's; anything else missing is looked for
  # on this machine, and a folder that has it joins the library path.
  local b lib found missing_any=0 still fallback=0
  declare -A need=() lacking=()
  collect_unresolved() {
    need=() lacking=()
    for b in $(awk -F'\t' '!/^#/ && NF >= 2 {print $2}' "$dir/manifest.tsv"); do
      while IFS= read -r lib; do
        [[ -n $lib ]] || continue
        need[$lib]+="${need[$lib]:+, }$b"
        lacking[$b]=1
      done < <(unresolved "$dir/bin/$b")
    done
  }
  collect_unresolved
  if [[ -d $dir/lib/fallback ]]; then
    for lib in "${!need[@]}"; do  # "libfoo.so.1", or ".../libstdc++.so.6: version `X' not found"
      b=${lib%%:*}
      [[ -e $dir/lib/fallback/${b##*/} ]] && fallback=1
    done
    if ((fallback)); then
      export LD_LIBRARY_PATH="$dir/lib:$dir/lib/fallback:${LD_LIBRARY_PATH#"$dir/lib:"}"
      collect_unresolved
    fi
    row "C++ runtime (libstdc++, libgcc_s)" "$( ((fallback)) && echo "the pack's (lib/fallback): this machine's is missing or older than the build's" || echo "this machine's")"
  fi
  for lib in "${!need[@]}"; do
    [[ $lib == *" "* ]] && continue  # a version problem: no folder fixes it
    found=$(find_lib "$lib")
    if [[ -n $found ]]; then
      export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$found"
      row "$lib" "found in $found (added to the library path)"
    fi
  done
  for b in "${!lacking[@]}"; do  # again, with what was found
    still=$(unresolved "$dir/bin/$b" | paste -sd';' | sed 's/;/; /g')
    if [[ -n $still ]]; then
      cannot_run[$b]=$still
      missing_any=1
    fi
  done
  if ((missing_any)); then
    declare -A by_lib=()
    for b in "${!cannot_run[@]}"; do
      IFS=';' read -ra libs <<<"${cannot_run[$b]}"
      for lib in "${libs[@]}"; do
        lib=${lib# }
        by_lib[$lib]+="${by_lib[$lib]:+, }$b"
      done
    done
    for lib in "${!by_lib[@]}"; do
      row "**MISSING** $lib" "needed by ${by_lib[$lib]}; not in lib/, BOOK_LIB_PATH, the CUDA toolkit, the loader's cache or Python's nvidia-* packages$(expected_note "$lib")"
    done
  else
    row "shared libraries" "every packed binary's resolve"
  fi
  # Where the libraries the pack could not carry (libs.tsv: cuBLAS, NCCL) resolve on this machine.
  if [[ -f $dir/libs.tsv ]]; then
    local user path
    while IFS=$'\t' read -r lib status users _; do
      [[ $status == expected ]] || continue
      user=${users%%,*}
      [[ -n ${cannot_run[$user]:-} && ${cannot_run[$user]} == *"$lib"* ]] && continue
      path=$(ldd "$dir/bin/$user" 2>/dev/null | awk -v n="$lib" '$1 == n {print $3; exit}')
      [[ -n $path ]] && row "$lib (not in the pack)" "$path"
    done < <(grep -v '^#' "$dir/libs.tsv")
  fi

  sanitizer=${COMPUTE_SANITIZER:-}
  if [[ -z $sanitizer ]]; then
    for candidate in "$(command -v compute-sanitizer 2>/dev/null)" /usr/local/cuda/bin/compute-sanitizer \
      /usr/local/cuda/compute-sanitizer/compute-sanitizer; do
      [[ -n $candidate && -x $candidate ]] && { sanitizer=$candidate; break; }
    done
  fi
  row "compute-sanitizer" "${sanitizer:-not found (the sanitizer steps are skipped)}"
  row "preflight time" "$((SECONDS - t0)) s"
  echo
  if ((cuda_unusable)); then
    echo "**nvidia-smi lists a GPU but CUDA cannot use it: $no_gpu_reason.** Every step is skipped."
    echo
  elif ((gpus == 0)); then
    echo "**No GPU: every step is skipped.** ($no_gpu_reason)"
    echo
  fi
}

expected_note() {  # SONAME: what pack.sh recorded about it (libs.tsv), if anything
  [[ -f $dir/libs.tsv ]] || return 0
  awk -F'\t' -v n="$1" '$1 == n && $2 == "expected" {printf " (at pack time: %s)", $4; exit}' "$dir/libs.tsv"
}

# ---- steps

declare -a skip_rungs=() failed_steps=()
passed=0 failed=0 skipped=0 step_number=0
selected() {
  [[ -z ${STEPS:-} ]] && return 0
  [[ ",$STEPS," == *",$1,"* ]]
}

add_skip() {
  local r
  for r in "$@"; do
    [[ $r == - || -z $r ]] && continue
    [[ " ${skip_rungs[*]-} " == *" $r "* ]] || skip_rungs+=("$r")
  done
}

# The failed tests of a GoogleTest XML file, one "Suite.Name" a line.
failed_tests() {
  awk '/<testcase / {match($0, /name="[^"]*"/); name = substr($0, RSTART + 6, RLENGTH - 7);
                     match($0, /classname="[^"]*"/); suite = substr($0, RSTART + 11, RLENGTH - 12)}
       /<failure/ {print suite "." name}' "$1" 2>/dev/null | sort -u
}

record_failure() {  # step result class status what out err [cmd]
  local step=$1 result=$2 class=$3 status=$4 what=$5 out=$6 err=$7 cmd=${8:-}
  {
    echo "### $step: $result"
    echo
    echo "$what"
    [[ -n $cmd ]] && echo && echo "command: \`$cmd\`"
    if [[ -s $out || -s $err ]]; then
      echo
      echo '```'
      if (($(cat "$out" "$err" 2>/dev/null | wc -l) <= 24)); then
        cat "$out" "$err" 2>/dev/null
      else  # the failures first (GoogleTest's and the sanitizer's), then the last lines
        cat "$out" "$err" 2>/dev/null | grep -E 'Failure|wrong elements|error|Error|FAILED|hazard|SUMMARY|not found|Expected|Which is' | head -15
        echo "..."
        cat "$out" "$err" 2>/dev/null | tail -8
      fi
      echo '```'
    fi
    echo
    echo "Hints:"
    echo
    explain "$class" "$status" "$out" "$err"
    echo
  } >>"$details"
}

step_row() { echo "| $step_number | $1 | $2 | $3 | $4 |"; }

run_step() {  # step binary tool timeout class rungs what args
  local step=$1 binary=$2 tool=$3 limit=$4 class=$5 rungs=$6 what=$7 args=$8
  step_number=$((step_number + 1))
  if ! selected "$step"; then
    step_row "$step" "$what" "not selected (STEPS)" "-"
    return
  fi
  if [[ ! -x $dir/bin/$binary ]]; then
    step_row "$step" "$what" "FAIL: $binary is not in the pack" "-"
    failed=$((failed + 1))
    failed_steps+=("$step")
    record_failure "$step" "not packed" "$class" 0 "$what: pack.sh did not pack $binary (did it build?)" /dev/null /dev/null
    return
  fi
  if ((gpus == 0)); then
    step_row "$step" "$what" "skipped: no GPU" "-"
    skipped=$((skipped + 1))
    return
  fi
  if [[ $tool != - && -z $sanitizer ]]; then
    step_row "$step" "$what" "skipped: no compute-sanitizer" "-"
    skipped=$((skipped + 1))
    return
  fi
  if [[ -n ${cannot_run[$binary]:-} ]]; then
    step_row "$step" "$what" "FAIL: cannot run, missing ${cannot_run[$binary]}" "-"
    failed=$((failed + 1))
    failed_steps+=("$step")
    echo "$binary: error while loading shared libraries: ${cannot_run[$binary]} (found missing by the preflight; not run)" >"$results/$step.err"
    record_failure "$step" "cannot run" "$class" 0 "$what: $binary needs ${cannot_run[$binary]}, which is not on this machine" /dev/null "$results/$step.err"
    return
  fi
  local left=$((budget - $(elapsed) - 5))
  ((limit > ${STEP_TIMEOUT:-$limit})) && limit=$STEP_TIMEOUT
  ((limit > left)) && limit=$left
  if ((limit < 3)); then
    step_row "$step" "$what" "not run (budget)" "-"
    failed=$((failed + 1))
    failed_steps+=("$step")
    return
  fi

  # The command: {stage_args} and {skip} filled in, GoogleTest's XML for tests, the sanitizer.
  local -a argv=() cmd=()
  local a skip_arg=""
  ((${#skip_rungs[@]})) && skip_arg="--skip=$(IFS=,; echo "${skip_rungs[*]}")"
  if [[ $args != - ]]; then
    read -ra argv <<<"$args"
  fi
  for a in "${argv[@]+"${argv[@]}"}"; do
    case $a in
      "{stage_args}") [[ -n ${STAGE_ARGS:-} ]] && read -ra extra <<<"$STAGE_ARGS" && cmd+=("${extra[@]}") ;;
      "{skip}") [[ -n $skip_arg ]] && cmd+=("$skip_arg") ;;
      *) cmd+=("$a") ;;
    esac
  done
  local kind xml="$results/$step.xml" out="$results/$step.out" err="$results/$step.err"
  kind=$(kind_of "$binary")
  [[ $kind == test ]] && cmd+=("--gtest_output=xml:$xml")
  cmd=("$dir/bin/$binary" "${cmd[@]+"${cmd[@]}"}")
  [[ $tool != - ]] && cmd=("$sanitizer" --tool "$tool" --error-exitcode 86 "${cmd[@]}")
  rm -f "$xml"

  local start=$SECONDS status
  (cd "$(workdir "$binary")" && timeout -k 5 "$limit" "${cmd[@]}" </dev/null >"$out" 2>"$err")
  status=$?
  local secs=$((SECONDS - start)) result ok=0

  if ((status == 124 || status == 137)); then
    result="TIMEOUT after $limit s"
  elif [[ $tool != - && $status == 86 ]]; then
    result="FAIL: $tool found errors"
  elif [[ $kind == test ]]; then
    local total fails skips first_skip
    total=$(sed -n 's/.*<testsuites tests="\([0-9]*\)".*/\1/p' "$xml" 2>/dev/null | head -1)
    fails=$(sed -n 's/.*<testsuites tests="[0-9]*" failures="\([0-9]*\)".*/\1/p' "$xml" 2>/dev/null | head -1)
    skips=$(grep -c 'result="skipped"' "$xml" 2>/dev/null)
    total=${total:-0} fails=${fails:-0} skips=${skips:-0}
    # The first skip's reason, without its file:line and without the advice after its first
    # sentence ("needs a GPU: no CUDA device here (...)").
    first_skip=$(grep -m1 -o '<skipped message="[^"]*' "$xml" 2>/dev/null |
      sed 's/<skipped message="//; s/&#x0A;/ /g; s/^[^ ]* //; s/\. .*//' | cut -c1-160)
    if [[ ! -f $xml ]]; then
      result="FAIL (exit $status, no XML: it crashed or could not start)"
    elif ((fails > 0 || status != 0)); then
      result="FAIL ($fails of $total failed, exit $status)"
    elif ((total == 0)); then
      result="FAIL: no test matched (plan.tsv's filter and the test's names disagree)"
    elif ((skips == total)) && [[ $first_skip == "needs a GPU"* ]]; then
      result="FAIL: every test skipped though the probe sees a GPU: $first_skip"
    elif ((skips == total)); then
      result="skipped: ${first_skip:-every test skipped}"
      ok=2
    elif ((skips > 0)); then
      result="pass ($((total - skips)) passed, $skips skipped)"
      ok=1
    else
      result="pass ($total test$( ((total == 1)) || echo s))"
      ok=1
    fi
  elif ((status == 0)); then
    result="pass"
    ok=1
  else
    result="FAIL (exit $status)"
  fi
  if ((ok == 1)); then
    passed=$((passed + 1))
  elif ((ok == 2)); then
    skipped=$((skipped + 1))
  else
    failed=$((failed + 1))
    failed_steps+=("$step")
    # Rungs that failed are left out of the stages: a rung that hangs or leaves a sticky CUDA
    # error would take the stage's other rungs with it. A parameterised test names its rung.
    if [[ $rungs != - ]]; then
      local named=() t r
      while read -r t; do
        r=${t##*/}
        [[ ",$rungs," == *",$r,"* ]] && named+=("$r")
      done < <(failed_tests "$xml")
      if ((${#named[@]})); then
        add_skip "${named[@]}"
      elif [[ ! -f $xml ]] || ((status == 124 || status == 137)) || [[ -z $(failed_tests "$xml") ]]; then
        add_skip ${rungs//,/ }
      fi
    fi
    local shown="${cmd[*]}"
    record_failure "$step" "$result" "$class" "$status" "$what" "$out" "$err" "${shown//$dir\//}"
  fi
  [[ $kind == stage && -s $out ]] && stage_outputs+=("$step")
  step_row "$step" "$what" "$result" "$secs s"
}

declare -a stage_outputs=()
preflight
echo "## Steps"
echo
echo "| # | step | what it checks | result | time |"
echo "|---:|---|---|---|---:|"
declare -A planned=()
while IFS=$'\t' read -r step binary tool limit class rungs what args; do
  [[ -z $step || $step == \#* ]] && continue
  planned[$binary]=1
  run_step "$step" "$binary" "$tool" "$limit" "$class" "$rungs" "$what" "${args:--}"
done <"$plan"
# Packed binaries no step names (a new chapter's GPU test, say): each a step of its own.
while IFS=$'\t' read -r kind name label; do
  [[ $kind == test || $kind == stage ]] || continue
  [[ -n ${planned[$name]:-} ]] && continue
  if [[ $kind == test ]]; then
    run_step "$name" "$name" - "${TEST_TIMEOUT:-120}" generic - "$label (not in plan.tsv)" -
  else
    run_step "$name" "$name" - "${STAGE_TIMEOUT:-180}" stage - "$label (not in plan.tsv)" "{stage_args}"
  fi
done < <(grep -v '^#' "$dir/manifest.tsv")

echo
echo "$step_number steps: $passed passed, $failed failed or not run, $skipped skipped; $(elapsed) s of the ${budget} s budget."
((${#skip_rungs[@]})) && echo "Left out of the stages after their tests failed: ${skip_rungs[*]}."
((${#failed_steps[@]})) && echo "To run those again after a fix: \`STEPS=$(IFS=,; echo "${failed_steps[*]}") run.sh\`."
echo
if [[ -s $details ]]; then
  echo "## Failures and hints"
  echo
  cat "$details"
fi
for s in "${stage_outputs[@]+"${stage_outputs[@]}"}"; do
  echo "## Output of $s"
  echo
  cat "$results/$s.out"
  echo
done
echo "Logs and XML: $results"

exec >&- 3>&-
wait "$tee_pid" 2>/dev/null
if ((failed > 0 || cuda_unusable)); then exit 1; fi
if ((gpus == 0)); then exit 3; fi
exit 0
