#!/usr/bin/env bash
# tools/cluster/cluster.sh end to end (BUILD says why it is `local` and `exclusive`):
#   cluster_test.sh CLUSTER_SH CLUSTER_PROBE
set -uo pipefail
cluster=$(readlink -f "$1")
probe=$(readlink -f "$2")
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ours() { ip netns list 2>/dev/null | awk 'index($1, "bookc") == 1 { print $1 }'; }

if ! reason=$("$cluster" check); then
  echo "SKIPPED: $reason"
  exit 0
fi

# Someone else's cluster run (a stage being measured) would show its namespaces here: wait for it.
mkdir -p /run/book-cluster
if ! flock -n /run/book-cluster/lock true; then
  echo "another cluster run is in progress; waiting for it (up to 10 minutes)"
  flock -w 600 /run/book-cluster/lock true || { echo "FAIL: the cluster lock stayed taken"; exit 1; }
fi

# Refusals: each exits 1 before making anything, naming what was wrong.
refuse() {
  local expect=$1
  shift
  local out rc=0
  out=$("$cluster" "$@" 2>&1) || rc=$?
  [[ $rc == 1 && $out == *"$expect"* ]] || fail "cluster.sh $*: exit $rc, '$out' (expected exit 1 saying '$expect')"
}
refuse "--nodes '0'" run --nodes 0 -- "$probe"
refuse "--nodes '99'" run --nodes 99 -- "$probe"
refuse "--ranks-per-node 'two'" run --ranks-per-node two -- "$probe"
refuse "--rate 'fast' does not parse" run --rate fast -- "$probe"
refuse "--rate '1gbps' does not parse" run --rate 1gbps -- "$probe"
refuse "--cut-link '5@1'" run --cut-link 5@1 -- "$probe"
refuse "needs a program" run --nodes 2
refuse "not an executable" run -- /nonexistent/program
refuse "unknown option '--colour'" run --colour -- "$probe"
refuse "usage" frobnicate
[[ -z $(ours) ]] || fail "a refusal left namespaces behind: $(ours)"

# Where it cannot work, `check` says why (exit 2): without mpirun on the PATH, and not as root.
bin=$(mktemp -d)
for tool in bash id ip tc unshare dirname awk readlink; do ln -s "$(command -v $tool)" "$bin/$tool"; done
out=$(PATH=$bin "$cluster" check 2>&1)
rc=$?
[[ $rc == 2 && $out == *"mpirun is not installed"* ]] || fail "check without mpirun: exit $rc, '$out'"
out=$(PATH=$bin "$cluster" run -- "$probe" 2>&1)
rc=$?
[[ $rc == 2 && $out == *"mpirun is not installed"* ]] || fail "run without mpirun: exit $rc, '$out'"
rm -rf "$bin"
if command -v setpriv >/dev/null; then
  out=$(setpriv --reuid 65534 --regid 65534 --clear-groups "$cluster" check 2>&1)
  rc=$?
  [[ $rc == 2 && $out == *"needs root"* ]] || fail "check as nobody: exit $rc, '$out'"
fi

# 1. A run: 2 nodes x 2 ranks on 200 Mbit/s links; the probe checks placement, the exact sum and
#    that each node's eth0 carried what the ring sent across nodes.
out=$("$cluster" run --nodes 2 --ranks-per-node 2 --rate 200mbit --timeout 120 -- "$probe" --mib 4 2>&1)
rc=$?
echo "$out" | sed 's/^/  run: /'
[[ $rc == 0 ]] || fail "the probe run exited $rc"
[[ $out == *"placement checked on every rank"* ]] || fail "the probe did not check placement"
[[ $out == *"raw TCP node 0 -> node 1"* ]] || fail "the run did not measure raw TCP"
[[ -z $(ours) ]] || fail "the run left namespaces behind: $(ours)"

# 2. A killed run (SIGKILL: no trap runs) leaves namespaces and processes; `cleanup` removes both,
#    and says there is nothing left the second time.
setsid "$cluster" run --nodes 2 --ranks-per-node 1 --timeout 120 -- "$probe" --mib 1 --seconds 60 \
  >/dev/null 2>&1 &
runner=$!
for _ in $(seq 100); do [[ $(ours | wc -l) -ge 3 ]] && break; sleep 0.2; done
sleep 3  # let mpirun start inside the nodes
[[ $(ours | wc -l) -ge 3 ]] || fail "the run to be killed never made its namespaces"
kill -KILL -- "-$runner" 2>/dev/null
wait "$runner" 2>/dev/null
[[ -n $(ours) ]] || fail "after SIGKILL there was nothing left to clean up (the test did not test)"
out=$("$cluster" cleanup 2>&1) || fail "cleanup after a killed run failed: $out"
echo "  cleanup: $out"
[[ $out == *"removed"* ]] || fail "cleanup did not say what it removed: $out"
[[ -z $(ours) ]] || fail "cleanup left namespaces: $(ours)"
pgrep -f "cluster_probe --mib 1 --seconds 60" >/dev/null && fail "cleanup left the killed run's ranks running"
out=$("$cluster" cleanup 2>&1)
[[ $out == *"nothing to remove"* ]] || fail "a second cleanup said: $out"

# 3. The failure drill: node 1's link goes down 3 s into a run of all-reduces with a 2 s timeout.
#    The ranks fail with the communicator's timeout naming the rank; the run ends by itself (not
#    by cluster.sh's --timeout, which would mean a hang) and leaves nothing behind.
out=$("$cluster" run --nodes 2 --ranks-per-node 1 --rate 1gbit --cut-link 1@3 --timeout 90 -- \
  "$probe" --mib 1 --seconds 30 --timeout-ms 2000 2>&1)
rc=$?
echo "$out" | tail -8 | sed 's/^/  drill: /'
[[ $rc != 0 ]] || fail "the run with a cut link succeeded"
[[ $rc != 124 && $rc != 137 ]] || fail "the run with a cut link hung until --timeout"
[[ $out == *"timed out after 2000 ms waiting for rank"* ]] ||
  fail "the cut link did not end in the communicator's timeout naming the rank"
[[ -z $(ours) ]] || fail "the drill left namespaces behind: $(ours)"

if ((failures)); then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all cluster checks passed"
