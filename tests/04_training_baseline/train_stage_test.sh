#!/usr/bin/env bash
# The train stage end to end on bad ground (issue 19): a results folder it cannot write is refused
# before the first step (it used to be found after the whole run), and a 10-step run does not
# call 0.1% (one lucky sum) "well above chance".
set -uo pipefail
train="$1"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
# On the exercise track the stage runs the reader's exercise bodies: until they are written it
# stops naming the one to write (exit 3), and there is nothing here to check yet.
stop_if_not_started() {
  if [[ $status -eq 3 ]] && grep -q "is not started" <<<"$out"; then
    echo "not started: $out"
    exit 0
  fi
}

out=$(BOOK_RESULTS_DIR=/proc/self "$train" --steps 10 --threads 1 2>&1)
status=$?
stop_if_not_started
[[ $status -eq 2 ]] || fail "an unwritable results folder: exit status $status, expected 2"
grep -q "cannot write into the results folder" <<<"$out" || fail "no 'cannot write' in: $out"
grep -q "^step " <<<"$out" && fail "it trained before refusing the results folder: $out"

results="${TEST_TMPDIR:-/tmp}/train_stage_results"
out=$(BOOK_RESULTS_DIR="$results" "$train" --steps 10 --digits 3 --threads 1 2>&1)
status=$?
stop_if_not_started
[[ $status -eq 0 ]] || fail "a 10-step run: exit status $status: $out"
accuracy=$(grep "^tour: 04 | exact-sum accuracy" <<<"$out")
echo "$accuracy"
# 10 steps of 3-digit addition get at most a lucky sum or two right (the run is seeded: 0.1%,
# one sum, which is 10 times chance but still luck): the line must not call that learning.
grep -q "| 0.[0-9]% | not above chance (0.01%) after 10 steps: train longer" <<<"$accuracy" ||
  fail "a 10-step run's accuracy line: expected '| 0.x% | not above chance (0.01%) after 10 steps: train longer', got: '$accuracy'"
[[ -f "$results/ch04_checkpoint.bin" ]] || fail "no checkpoint in $results"

[[ $failures -eq 0 ]] && echo "PASS"
exit $((failures > 0))
