#!/usr/bin/env bash
# run.sh [PACKED_DIR] — runs everything tools/gpu/pack.sh packed: every GPU test, then every GPU
# stage, and prints one report table (test, result, counts, time) followed by the stages' output
# (the GEMM ladder's timing table among it). Needs a GPU, its driver and CUDA's lib64; no Bazel.
# Inside a packed folder it runs that folder; from the repository it runs out/gpu.
# Environment: TEST_TIMEOUT (seconds per test, default 180), STAGE_TIMEOUT (default 300),
# RUN_BUDGET (seconds for the whole run, default 480: what is not started by then is listed as
# "not run (budget)"; a lent GPU machine has about 15 minutes in all, 10 per command),
# STAGE_ARGS (extra arguments for every stage, e.g. "--tour").
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
if [[ $# -ge 1 ]]; then dir=$(cd "$1" && pwd)
elif [[ -f $here/manifest.tsv ]]; then dir=$here
else dir=$(cd "$here/../.." && pwd)/out/gpu; fi
[[ -f $dir/manifest.tsv ]] || { echo "run: no manifest.tsv in $dir: run tools/gpu/pack.sh first" >&2; exit 2; }

export LD_LIBRARY_PATH="$dir/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
results=${BOOK_RESULTS_DIR:-$dir/results/$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$results"
export BOOK_RESULTS_DIR=$results

echo "# GPU report"
echo
echo "- packed: $(tr '\n' ';' <"$dir/VERSION" 2>/dev/null)"
echo "- ran: $(date -u +%Y-%m-%dT%H:%MZ) on $(uname -n)"
if command -v nvidia-smi >/dev/null 2>&1; then
  echo "- GPU: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | paste -sd';')"
else
  echo "- GPU: nvidia-smi not found"
fi
echo

# Each binary runs where `bazel run` would run it: in its runfiles tree (data files are there).
workdir() {
  local wd="$dir/runfiles/$1"
  [[ -d $wd/llm_infra_book ]] && wd=$wd/llm_infra_book
  [[ -d $wd ]] || wd=$dir
  echo "$wd"
}

run_start=$(date +%s)
# True while the run's budget has time left for another item.
in_budget() { (($(date +%s) - run_start < ${RUN_BUDGET:-480})); }

rows=()
failed=0 ran_any=0 skipped_all=1 first_skip=""
while IFS=$'\t' read -r kind name label; do
  [[ $kind == test ]] || continue
  if ! in_budget; then
    rows+=("| $label | not run (budget) | 0 | 0 | 0 | 0 s |")
    failed=$((failed + 1))
    continue
  fi
  xml="$results/$name.xml" log="$results/$name.log"
  start=$(date +%s.%N)
  (cd "$(workdir "$name")" && timeout "${TEST_TIMEOUT:-180}" "$dir/bin/$name" --gtest_output="xml:$xml") >"$log" 2>&1
  rc=$?
  secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}')
  total=$(sed -n 's/.*<testsuites tests="\([0-9]*\)".*/\1/p' "$xml" 2>/dev/null | head -1)
  fails=$(sed -n 's/.*<testsuites tests="[0-9]*" failures="\([0-9]*\)".*/\1/p' "$xml" 2>/dev/null | head -1)
  skips=$(grep -c 'result="skipped"' "$xml" 2>/dev/null)
  total=${total:-0} fails=${fails:-0} skips=${skips:-0}
  passes=$((total - fails - skips))
  if ((rc == 124)); then result="TIMEOUT"
  elif ((rc != 0 || fails > 0)) || [[ ! -f $xml ]]; then result="FAIL (exit $rc)"
  elif ((skips == total)); then result="skipped"
  elif ((skips > 0)); then result="pass ($skips skipped)"
  else result="pass"; fi
  [[ $result == pass* ]] || [[ $result == skipped ]] || failed=$((failed + 1))
  ((passes > 0)) && skipped_all=0
  ran_any=1
  if [[ -z $first_skip ]]; then first_skip=$(grep -m1 -o 'needs a GPU[^"]*' "$log" | head -1); fi
  rows+=("| $label | $result | $passes | $fails | $skips | ${secs} s |")
done < <(grep -v '^#' "$dir/manifest.tsv")

echo "## Tests"
echo
echo "| test | result | passed | failed | skipped | time |"
echo "|---|---|---:|---:|---:|---:|"
for r in "${rows[@]}"; do echo "$r"; done
echo
if ((ran_any && skipped_all)); then
  echo "**No test ran on a GPU: all were skipped.** ${first_skip:-}"
  echo
fi

echo "## Stages"
while IFS=$'\t' read -r kind name label; do
  [[ $kind == stage ]] || continue
  echo
  echo "### $label ${STAGE_ARGS:-}"
  echo
  if ! in_budget; then
    echo "(not run: the run's budget of ${RUN_BUDGET:-480} s is spent)"
    failed=$((failed + 1))
    continue
  fi
  (cd "$(workdir "$name")" && timeout "${STAGE_TIMEOUT:-300}" "$dir/bin/$name" ${STAGE_ARGS:-}) 2>&1 |
    tee "$results/$name.log"
  rc=${PIPESTATUS[0]}
  if ((rc != 0)); then echo "(exit $rc)"; failed=$((failed + 1)); fi
done < <(grep -v '^#' "$dir/manifest.tsv")

echo
echo "Logs and XML: $results"
((failed == 0))
