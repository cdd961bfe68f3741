#!/usr/bin/env bash
# Exercises tools/gpu/run.sh here, without a GPU, on fake packs (bazel test //tools/gpu:run_test):
#
# 1. No GPU: the real probe says so, every step of the real plan reports "skipped: no GPU", and
#    the preflight reports a library a packed binary needs and the pack lacks; then, with
#    BOOK_LIB_PATH pointing at it, reports where it found it instead; then finds it in the pack's
#    lib/fallback (the C++ runtime's place). Exit status 3.
# 2. A fake GPU: a fake probe reports an H200 and every binary of the real plan.tsv is a fake
#    GoogleTest binary that does what the test tells it. The steps run in the plan's order; a
#    failed rung's pattern tag gets its hint; the Hopper step's hang is cut at its limit with the
#    expected-bytes hint; the stages then run with --skip= for those rungs; the NCCL step's binary
#    lacks a library and "cannot run"; the sanitizer steps go through compute-sanitizer with their
#    tools. Exit status 1.
# 3. The budget: a step that hangs is cut at what RUN_BUDGET leaves, what does not fit is "not run
#    (budget)", and the run ends in time.
# 4. STEPS= runs only the named steps; --explain gives the hint for a saved log.
#
# Arguments: run.sh, plan.tsv, the probe, the binary that needs the missing library, the library.
set -uo pipefail

run=$1 plan=$2 probe=$3 needs_lib=$4 the_lib=$5
tmp=${TEST_TMPDIR:-$(mktemp -d)}
failures=0

fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}
expect_in() {  # FILE TEXT [what]
  grep -qF -- "$2" "$1" || fail "${3:-$1} lacks: $2"
}
expect_not_in() {
  grep -qF -- "$2" "$1" && fail "${3:-$1} has, but should not: $2"
  return 0
}
# The step names of the report's table, in order.
step_order() { awk -F' [|] ' '/^\| [0-9]+ \| / {print $2}' "$1"; }

plan_binaries() { awk -F'\t' '!/^#/ && NF >= 2 {print $2}' "$plan" | sort -u; }
plan_steps() { awk -F'\t' '!/^#/ && NF >= 2 {print $1}' "$plan"; }

new_pack() {  # DIR: a pack with the real plan, run.sh, and a manifest listing its binaries
  local pack=$1
  rm -rf "$pack"
  mkdir -p "$pack/bin" "$pack/lib" "$pack/runfiles"
  cp "$run" "$plan" "$pack/"
  echo "commit fake; packed by run_test.sh" >"$pack/VERSION"
  printf '# kind\tname\tlabel\n' >"$pack/manifest.tsv"
}
add() {  # DIR KIND NAME FILE
  cp "$4" "$1/bin/$3"
  chmod +x "$1/bin/$3"
  printf '%s\t%s\t//fake:%s\n' "$2" "$3" "$3" >>"$1/manifest.tsv"
}
kind_for() { [[ $1 == chapters_* ]] && echo stage || echo test; }

# ---- 1. no GPU, a missing library

pack=$tmp/nogpu
new_pack "$pack"
add "$pack" probe tools_gpu__probe "$probe"
for b in $(plan_binaries); do add "$pack" "$(kind_for "$b")" "$b" "$needs_lib"; done
report=$tmp/nogpu.md
BOOK_RESULTS_DIR=$tmp/nogpu_results RUN_BUDGET=60 "$run" "$pack" >"$report" 2>&1
status=$?
((status == 3)) || fail "no GPU: exit status $status, expected 3"
expect_in "$report" "**No GPU: every step is skipped.**" "no-GPU report"
expect_in "$report" "| devices | none: " "no-GPU report"
expect_in "$report" "**MISSING** libbook_gpu_missing.so" "no-GPU report"
grep -F '**MISSING** libbook_gpu_missing.so' "$report" | grep -qF chapters_02_gemm_cuda__bench ||
  fail "no GPU: the missing library's row does not name the binaries that need it"
expect_in "$report" "| compute-sanitizer |" "no-GPU report"
[[ $(step_order "$report") == "$(plan_steps)" ]] || fail "no GPU: steps not in the plan's order: $(step_order "$report" | paste -sd' ')"
n_steps=$(plan_steps | wc -l)
[[ $(grep -c '| skipped: no GPU |' "$report") == "$n_steps" ]] ||
  fail "no GPU: $(grep -c '| skipped: no GPU |' "$report") of $n_steps steps say 'skipped: no GPU'"
[[ -s $tmp/nogpu_results/report.md ]] || fail "no GPU: results/report.md was not written"

# The same pack, with the library's folder in BOOK_LIB_PATH: found, and no longer missing.
libdir=$tmp/libs
mkdir -p "$libdir"
cp "$the_lib" "$libdir/"
report=$tmp/nogpu_found.md
BOOK_LIB_PATH=$libdir BOOK_RESULTS_DIR=$tmp/nogpu_found_results "$run" "$pack" >"$report" 2>&1
expect_in "$report" "| libbook_gpu_missing.so | found in $libdir (added to the library path) |" "BOOK_LIB_PATH report"
expect_not_in "$report" "**MISSING**" "BOOK_LIB_PATH report"
expect_in "$report" "| shared libraries | every packed binary's resolve |" "BOOK_LIB_PATH report"

# A library in lib/fallback (where pack.sh puts the C++ runtime) is used only when it is missing
# or too old here, as now.
mkdir -p "$pack/lib/fallback"
cp "$the_lib" "$pack/lib/fallback/"
report=$tmp/nogpu_fallback.md
BOOK_RESULTS_DIR=$tmp/nogpu_fallback_results "$run" "$pack" >"$report" 2>&1
expect_in "$report" "| C++ runtime (libstdc++, libgcc_s) | the pack's (lib/fallback)" "lib/fallback report"
expect_not_in "$report" "**MISSING**" "lib/fallback report"
rm "$pack/lib/fallback/libbook_gpu_missing.so"
BOOK_RESULTS_DIR=$tmp/nogpu_fallback_results2 "$run" "$pack" >"$report" 2>&1
expect_in "$report" "| C++ runtime (libstdc++, libgcc_s) | this machine's |" "lib/fallback report, nothing missing"

# ---- 2. a fake GPU

fake_probe=$tmp/fake_probe
cat >"$fake_probe" <<'EOF'
#!/bin/sh
echo "driver: CUDA 13.0"
echo "runtime: CUDA 13.0"
echo "devices: 1"
echo "device 0: NVIDIA H200 (fake), sm_90, 132 SMs, 143771 MiB, 60 MiB L2"
EOF
# A fake GoogleTest binary / stage. What it does is FAKE_<binary> (default pass): pass, hang,
# skipgpu (every test skips for want of a GPU), fail:<test name>:<pattern tags>. It appends its name and arguments to $FAKE_TRACE. Under the
# fake sanitizer (FAKE_SANITIZER_TOOL set) it always passes.
fake_bin=$tmp/fake_bin
cat >"$fake_bin" <<'EOF'
#!/bin/bash
name=$(basename "$0")
echo "$name ${FAKE_SANITIZER_TOOL:+[$FAKE_SANITIZER_TOOL] }$*" >>"$FAKE_TRACE"
var="FAKE_$name"
what=${!var:-pass}
[[ -n ${FAKE_SANITIZER_TOOL:-} ]] && what=pass
xml=""
for a in "$@"; do [[ $a == --gtest_output=xml:* ]] && xml=${a#--gtest_output=xml:}; done
case $what in
  hang) exec sleep 30 ;;
  skipgpu)
    echo "[  SKIPPED ] Fake.NeedsAGpu"
    [[ -n $xml ]] && printf '<testsuites tests="1" failures="0" disabled="0" errors="0">\n<testcase name="NeedsAGpu" status="run" result="skipped" classname="Fake">\n<skipped message="fake.cc:3&#x0A;needs a GPU: no CUDA device here (planted). On a GPU machine run tools/gpu/run.sh."/>\n</testcase>\n</testsuites>\n' >"$xml"
    exit 0 ;;
  fail:*)
    test=${what#fail:}; test=${test%%:*}; tags=${what#fail:*:}
    # Only the step whose filter selects the failing suite fails.
    suite=${test%%[/.]*}
    [[ " $* " == *"$suite"* ]] || { what=pass; }
  ;;&
  fail:*)
    [[ $what == pass ]] && { echo "[  PASSED  ] 1 test."; [[ -n $xml ]] && printf '<testsuites tests="1" failures="0" disabled="0" errors="0">\n<testcase name="Fine" status="run" result="completed" classname="Fake"/>\n</testsuites>\n' >"$xml"; exit 0; }
    echo "tests/fake.cc:1: Failure"
    echo "rung 9 (mma_cp_async) seed 2025: 12 wrong elements; first: C(0,0) ...; pattern: $tags"
    [[ -n $xml ]] && cat >"$xml" <<XML
<testsuites tests="2" failures="1" disabled="0" errors="0">
<testcase name="${test#*.}" status="run" result="completed" classname="${test%%.*}">
<failure message="wrong"/>
</testcase>
<testcase name="Other" status="run" result="completed" classname="Fine"/>
</testsuites>
XML
    exit 1 ;;
  *)
    echo "[  PASSED  ] 1 test."
    [[ -n $xml ]] && printf '<testsuites tests="1" failures="0" disabled="0" errors="0">\n<testcase name="Fine" status="run" result="completed" classname="Fake"/>\n</testsuites>\n' >"$xml"
    exit 0 ;;
esac
EOF
chmod +x "$fake_bin"
fake_sanitizer=$tmp/compute-sanitizer
cat >"$fake_sanitizer" <<'EOF'
#!/bin/bash
# compute-sanitizer --tool TOOL --error-exitcode N BINARY ARGS...
[[ $1 == --tool && $3 == --error-exitcode ]] || { echo "fake sanitizer: unexpected $*" >&2; exit 99; }
export FAKE_SANITIZER_TOOL=$2
shift 4
exec "$@"
EOF
chmod +x "$fake_sanitizer"

pack=$tmp/gpu
new_pack "$pack"
add "$pack" probe tools_gpu__probe "$fake_probe"
for b in $(plan_binaries); do
  if [[ $b == tests_03_collectives__nccl_test ]]; then
    add "$pack" test "$b" "$needs_lib"  # its library is missing: "cannot run"
  else
    add "$pack" "$(kind_for "$b")" "$b" "$fake_bin"
  fi
done
add "$pack" test tests_99_new__gpu_test "$fake_bin"  # in no step of the plan
trace=$tmp/gpu_trace
: >"$trace"
report=$tmp/gpu.md
FAKE_TRACE=$trace COMPUTE_SANITIZER=$fake_sanitizer STEP_TIMEOUT=3 RUN_BUDGET=120 \
  FAKE_tests_02_gemm_cuda__gpu_ladder_test="fail:TensorCore/GpuRung.MatchesTheDoubleReferenceAtAwkwardSizes/mma_cp_async:[whole 8x8 groups]" \
  FAKE_tests_02_gemm_cuda__gpu_hopper_test=hang FAKE_tests_99_new__gpu_test=skipgpu \
  BOOK_RESULTS_DIR=$tmp/gpu_results "$run" "$pack" >"$report" 2>&1
status=$?
((status == 1)) || fail "fake GPU: exit status $status, expected 1"
expected_order=$( (plan_steps; echo tests_99_new__gpu_test) )
[[ $(step_order "$report") == "$expected_order" ]] ||
  fail "fake GPU: steps not in the plan's order: $(step_order "$report" | paste -sd' ')"
expect_in "$report" "| devices | 0: NVIDIA H200 (fake)" "fake-GPU report"
expect_in "$report" "| hopper | rung 10, wgmma + TMA (Hopper only), its own binary | TIMEOUT after 3 s |" "fake-GPU report"
expect_in "$report" "expected-bytes count" "fake-GPU report (the Hopper hang's hint)"
expect_in "$report" "ldmatrix" "fake-GPU report (the 8x8 groups hint for rung 9)"
expect_in "$report" "| nccl | NCCL on one GPU: collectives, device-side reduce | FAIL: cannot run, missing libbook_gpu_missing.so |" "fake-GPU report"
expect_in "$report" "| shared_tile | rung 3, shared-memory tiles (exercise cuda_gemm.shared_tile) | pass (1 test) |" "fake-GPU report"
expect_in "$report" "| simt | cuBLAS (rung 0) and the SIMT rungs 1, 2, 4, 6, 7 at awkward sizes; launchers' argument checks | pass (1 test) |" "fake-GPU report"
expect_in "$report" "| tests_99_new__gpu_test | //fake:tests_99_new__gpu_test (not in plan.tsv) | FAIL: every test skipped though the probe sees a GPU: needs a GPU: no CUDA device here (planted) |" "fake-GPU report (a binary the plan does not name, whose tests do not see the GPU)"
expect_in "$report" "Left out of the stages after their tests failed: mma_cp_async wgmma_tma." "fake-GPU report"
# The trace: the filters, the stages' --skip, the sanitizers' tools, in order.
expect_in "$trace" "tests_02_gemm_cuda__gpu_ladder_test --gtest_filter=Peer/*:Simt/*:GpuLaunchers.* --gtest_output=xml:" "trace"
expect_in "$trace" "chapters_02_gemm_cuda__ladder --skip=mma_cp_async,wgmma_tma" "trace"
expect_in "$trace" "chapters_02_gemm_cuda__bench --skip=mma_cp_async,wgmma_tma" "trace"
expect_in "$trace" "tests_02_gemm_cuda__gpu_ladder_test [racecheck] --gtest_filter=GpuSanitize.*" "trace"
expect_in "$trace" "tests_02_gemm_cuda__gpu_ladder_test [synccheck] --gtest_filter=GpuSanitize.*" "trace"
expect_in "$trace" "tests_02_gemm_cuda__gpu_hopper_test [memcheck] --gtest_filter=GpuHopper.SmallRaggedShapeUnderTma" "trace"
[[ $(grep -n 'gpu_hopper_test --gtest' "$trace" | cut -d: -f1) -lt $(grep -n 'chapters_02_gemm_cuda__ladder' "$trace" | cut -d: -f1) ]] ||
  fail "the ladder stage ran before the Hopper test"

# ---- 3. the budget

report=$tmp/budget.md
start=$SECONDS
# (BOOK_LIB_PATH: the NCCL step's library is found at once, so the preflight is quick.)
FAKE_TRACE=$tmp/budget_trace FAKE_tests_02_gemm_cuda__gpu_ladder_test=hang RUN_BUDGET=30 BOOK_LIB_PATH=$libdir \
  BOOK_RESULTS_DIR=$tmp/budget_results "$run" "$pack" >"$report" 2>&1
status=$?
((SECONDS - start <= 38)) || fail "budget: a 30 s budget took $((SECONDS - start)) s (a few seconds over is this machine's load; the hanging step alone would take 90 s)"
((status == 1)) || fail "budget: exit status $status, expected 1"
expect_in "$report" "| simt | cuBLAS (rung 0) and the SIMT rungs" "budget report"
grep -qE '^\| [0-9]+ \| simt \| .* \| TIMEOUT after [0-9]+ s \|' "$report" ||
  fail "budget: the first step was not cut at what the budget left"
expect_in "$report" "| bench | Google Benchmark: every rung vs its cuBLAS peer | not run (budget) |" "budget report"

# ---- 4. STEPS and --explain

report=$tmp/steps.md
FAKE_TRACE=$tmp/steps_trace STEPS=hopper,ladder BOOK_LIB_PATH=$libdir BOOK_RESULTS_DIR=$tmp/steps_results "$run" "$pack" >"$report" 2>&1
expect_in "$report" "| simt | cuBLAS (rung 0) and the SIMT rungs 1, 2, 4, 6, 7 at awkward sizes; launchers' argument checks | not selected (STEPS) | - |" "STEPS report"
[[ $(wc -l <"$tmp/steps_trace") == 2 ]] || fail "STEPS=hopper,ladder ran: $(cat "$tmp/steps_trace")"

log=$tmp/hopper.log
echo "rung 10 (wgmma_tma) seed 2025: 4096 wrong elements; first: C(0,64) ...; pattern: [right half of tile only] [whole columns]" >"$log"
"$run" --explain hopper 1 "$log" >"$tmp/explain.txt"
expect_in "$tmp/explain.txt" "leading-dimension byte offset (LBO" "--explain hopper (right half)"
expect_in "$tmp/explain.txt" "whole columns of C are wrong" "--explain hopper (right half)"
echo "pattern: [whole 8x8 groups]" >"$log"
"$run" --explain hopper 1 "$log" >"$tmp/explain.txt"
expect_in "$tmp/explain.txt" "swizzle" "--explain hopper (8x8 groups)"
echo "pattern: [unwritten] [edge tiles only]" >"$log"
"$run" --explain simt 1 "$log" >"$tmp/explain.txt"
expect_in "$tmp/explain.txt" "never written" "--explain simt"
expect_in "$tmp/explain.txt" "the masks at ragged m, n or k" "--explain simt"
echo "nothing recognisable" >"$log"
"$run" --explain simt 1 "$log" >"$tmp/explain.txt"
expect_in "$tmp/explain.txt" "no known signature" "--explain with nothing known"
"$run" --explain nccl 124 /dev/null >"$tmp/explain.txt"
expect_in "$tmp/explain.txt" "NCCL_SOCKET_IFNAME=lo" "--explain nccl timeout"

if ((failures)); then
  echo "$failures checks failed; the reports are in $tmp" >&2
  exit 1
fi
echo "run.sh: every check passed"
