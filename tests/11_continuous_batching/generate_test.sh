#!/usr/bin/env bash
# The offline generate CLI end to end on chapter 4's trained addition checkpoint: greedy answers
# are right, --stream prints each request's tokens as they are sampled (the answer digits, least
# significant first, the last one marked done), and a bad --sums is refused with exit status 2.
set -uo pipefail
generate="$1"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

out=$("$generate" --sums 12+34,99+1,7+8 2>&1)
status=$?
echo "$out"
# With --config=exercises the CLI runs the reader's exercise bodies: until they are written it can
# only say so, which is not this test's failure (the graded tests say what to write).
if grep -q "is not started: write it in" <<<"$out"; then
  echo "SKIPPED: the engine's exercises are not written yet: $out"
  exit 0
fi
[[ $status -eq 0 ]] || fail "exit status $status"
for line in "12+34 = 46   [tokens 640" "99+1 = 100   [tokens 001" "7+8 = 15   [tokens 510" \
  "3 requests in "; do
  grep -qF "$line" <<<"$out" || fail "no line with '$line'"
done
grep -q "wrong" <<<"$out" && fail "a wrong greedy answer: $out"

out=$("$generate" --sums 12+34 --stream 2>&1)
echo "$out"
expected=$'request 0 (12+34): token 6\nrequest 0 (12+34): token 4\nrequest 0 (12+34): token 0 (done)'
[[ "$(grep '^request' <<<"$out")" == "$expected" ]] || fail "--stream printed: $out"

out=$("$generate" --sums 1+2+3 2>&1)
status=$?
[[ $status -eq 2 ]] || fail "--sums 1+2+3: exit status $status, expected 2"
grep -qF "'1+2+3' is not a sum like 12+34" <<<"$out" || fail "--sums 1+2+3 said: $out"
out=$("$generate" --sums 100+1 2>&1)
[[ $? -eq 2 ]] || fail "--sums 100+1 was not refused"
grep -qF "this model adds numbers below 100" <<<"$out" || fail "--sums 100+1 said: $out"

[[ $failures -eq 0 ]] && echo "PASS"
exit $((failures > 0))
