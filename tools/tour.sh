#!/usr/bin/env bash
# bazel run //:tour — runs every finished chapter's stage in its quick mode (--tour) and prints
# the headline numbers, measured now on this machine, next to the textbook claims they back.
# Each stage prints lines "tour: <chapter> | <what> | <measured> | <claim>"; this script collects them.
set -uo pipefail

log_dir=$(mktemp -d)
rows=()
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
done
rm -rf "$log_dir"

echo
echo "| ch | measured here | value | the claim it backs |"
echo "|---|---|---:|---|"
for row in "${rows[@]}"; do echo "| ${row} |"; done
echo
echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(date -u +%Y-%m-%d)."
echo "Each chapter's README explains its numbers; run a chapter's stage without --tour for the full table."
((${#failed[@]} == 0)) || { echo "tour: these stages failed: ${failed[*]}" >&2; exit 1; }
