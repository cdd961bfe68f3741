#!/usr/bin/env bash
# The memory stage on a GPU too small for its colocated-RL table (issue 19): --gpu-gib 24 is
# refused before any measuring, naming the flag and the smallest size that works. It used to
# measure for minutes and then fail with "kv_blocks must be >= 1, got 0".
set -uo pipefail
memory="$1"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

out=$("$memory" --gpu-gib 24 2>&1)
status=$?
[[ $status -eq 2 ]] || fail "--gpu-gib 24: exit status $status, expected 2: $out"
# Llama-2 7B's ZeRO-3 state over 8 ranks, its activations, the engine's 13.5 GB of weights, one
# 16-token KV block and the 1 GiB overhead come to just over 28 GiB.
grep -q "memory: error: --gpu-gib 24 is too small for the colocated RL table" <<<"$out" ||
  fail "no error naming --gpu-gib 24 in: $out"
grep -q "use --gpu-gib 29 or more" <<<"$out" || fail "no smallest size (29) in: $out"
grep -q "measuring" <<<"$out" && fail "it measured before refusing: $out"

[[ $failures -eq 0 ]] && echo "PASS"
exit $((failures > 0))
