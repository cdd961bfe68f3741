#!/usr/bin/env bash
# The benches with the Google Benchmark flags a reader passes (issue 30: aggregates-only made
# chapter 1's reporter take the median of nothing and crash; --benchmark_list_tests made chapter
# 4's bench measure anyway). Each run is filtered to the smallest benchmarks, so this takes
# seconds. Usage: bench_flags_test.sh CH01_BENCH CH04_BENCH (a test of chapter 4: a later chapter may
# run an earlier one's bench, not the other way round)
set -uo pipefail
ch01=$1
ch04=$2
failures=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT

expect() {  # expect DESCRIPTION PATTERN COMMAND...
  local what=$1 pattern=$2
  shift 2
  "$@" >"$out" 2>&1
  local status=$?
  if ((status != 0)); then
    echo "FAILED: $what: exit status $status from: $*"; tail -15 "$out"; failures=$((failures + 1)); return
  fi
  if ! grep -qE "$pattern" "$out"; then
    echo "FAILED: $what: no line matching '$pattern' in the output of: $*"; tail -15 "$out"
    failures=$((failures + 1)); return
  fi
  echo "ok: $what"
}

quick=(--benchmark_filter='^OpenBLAS 1 thread/256' --benchmark_min_time=0.01)
# The ratio table has OpenBLAS against itself: exactly 1.000 at n = 256.
expect "ch01 default repetitions" '[|] OpenBLAS 1 thread +[|] 256 .*[|] +1\.000 [|]' "$ch01" "${quick[@]}"
expect "ch01 --benchmark_report_aggregates_only" '[|] OpenBLAS 1 thread +[|] 256 +[|] +[0-9.]+ +[|] +- +[|] +1\.000 [|]' \
  "$ch01" "${quick[@]}" --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
expect "ch01 --benchmark_display_aggregates_only" '[|] OpenBLAS 1 thread +[|] 256 .*[|] +1\.000 [|]' \
  "$ch01" "${quick[@]}" --benchmark_repetitions=3 --benchmark_display_aggregates_only=true
expect "ch01 one repetition" '[|] OpenBLAS 1 thread +[|] 256 +[|] +[0-9.]+ +[|] +- +[|] +1\.000 [|]' \
  "$ch01" "${quick[@]}" --benchmark_repetitions=1
expect "ch01 names the peer's kernels" 'peers: OpenBLAS [0-9.]+, core [A-Za-z0-9]+ \(' \
  "$ch01" "${quick[@]}" --benchmark_repetitions=1
# Listing measures nothing: no peer check, no ratio table, no per-layer rounds.
expect "ch04 --benchmark_list_tests" '^BM_LibtorchStep/batch:32/threads:1/intra:1/blas:1/real_time$' \
  "$ch04" --benchmark_list_tests=true
if grep -qE 'Medians of each|per step|peer:' "$out"; then
  echo "FAILED: ch04 --benchmark_list_tests measured something:"; cat "$out"; failures=$((failures + 1))
fi
exit $((failures > 0))
