#!/usr/bin/env bash
# bazel run //:tour — runs every finished chapter's stage in its quick mode (--tour) and prints
# the headline numbers, measured now on this machine, next to the textbook claims they back.
# Each stage prints lines "tour: <chapter> | <what> | <measured> | <claim>", one line
# "tour-config: <chapter> | <what the quick mode ran, and how it differs from the chapter's
# default run>", and first a line "machine: ... quiet|BUSY" (book::print_machine_load); this
# script collects them, and says which stages ran on a busy machine.
set -uo pipefail

# The same measure as book::print_machine_load, for the start: load averages, and the share of
# CPU time that was busy over a quarter of a second while this script slept.
machine_load() {
  local a b busy0 total0 busy1 total1
  read -r _ a < <(head -1 /proc/stat)
  sleep 0.25
  read -r _ b < <(head -1 /proc/stat)
  busy_total() {  # user nice system idle iowait irq softirq steal
    local -a f=($1)
    local total=$((f[0] + f[1] + f[2] + f[3] + f[4] + f[5] + f[6] + f[7]))
    echo "$((total - f[3] - f[4])) $total"
  }
  read -r busy0 total0 < <(busy_total "$a")
  read -r busy1 total1 < <(busy_total "$b")
  local percent=$(((busy1 - busy0) * 100 / (total1 - total0 > 0 ? total1 - total0 : 1)))
  local verdict=quiet
  ((percent >= 25)) && verdict="BUSY: other work is running, so the timings below are noisy"
  echo "$(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg | sed 's/ /, /g') (1, 5, 15 min); CPUs ${percent}% busy in the 0.25 s before the tour: ${verdict}"
}

echo "tour: machine at the start: $(machine_load)" >&2
log_dir=$(mktemp -d)
rows=()
configs=()
busy=()
failed=()
for stage in "$@"; do
  name=${stage#*chapters/}
  echo "tour: running ${name} --tour ..." >&2
  start=$SECONDS
  if "$stage" --tour >"$log_dir/out" 2>&1; then
    echo "tour:   done in $((SECONDS - start)) s" >&2
  else
    echo "tour:   FAILED (exit $?); its last lines:" >&2
    tail -5 "$log_dir/out" >&2
    failed+=("$name")
  fi
  while IFS= read -r line; do rows+=("${line#tour: }"); done < <(grep '^tour: ' "$log_dir/out")
  while IFS= read -r line; do configs+=("${line#tour-config: }"); done < <(grep '^tour-config: ' "$log_dir/out")
  grep -q '^machine: .*BUSY' "$log_dir/out" && busy+=("${name%%/*}")
done
rm -rf "$log_dir"

echo
echo "| ch | measured here | value | the claim it backs |"
echo "|---|---|---:|---|"
for row in "${rows[@]}"; do echo "| ${row} |"; done
echo
echo "What each stage ran (the tour's quick modes, not the chapters' full runs):"
for config in "${configs[@]}"; do echo "- ${config}"; done
echo
echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(date -u '+%Y-%m-%d %H:%M UTC')."
echo "Load at the end: $(machine_load)."
if ((${#busy[@]} > 0)); then
  echo "Stages that started on a busy machine (their timings are noisy; rerun when it is quiet): ${busy[*]}."
else
  echo "Every stage started on a quiet machine."
fi
echo "Each chapter's README explains its numbers; run a chapter's stage without --tour for the full table."
((${#failed[@]} == 0)) || { echo "tour: these stages failed: ${failed[*]}" >&2; exit 1; }
