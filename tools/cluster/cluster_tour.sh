#!/usr/bin/env bash
# The namespace cluster's part of the tour (bazel run //:tour runs it as a stage, with --tour), or
# on its own: bazel run -c opt //tools/cluster:cluster_tour [-- --tour]
# Where the cluster cannot be made (not root, no namespaces) it prints one tour line saying why.
# Paths are relative to the runfiles folder Bazel runs it in.
set -uo pipefail
tour=false
[[ ${1:-} == --tour ]] && tour=true
cluster=tools/cluster/cluster.sh
if ! reason=$("$cluster" check 2>&1); then
  echo "tour: cluster | namespace cluster | not run | ${reason#cluster: }"
  exit 0
fi
status=0
run() {  # run NAME CLUSTER-OPTIONS... -- BINARY ARGS...
  local name=$1
  shift
  echo "cluster tour: $name" >&2
  "$cluster" run "$@" || { echo "cluster tour: $name failed" >&2; status=1; }
}
run probe --nodes 2 --ranks-per-node 2 --rate 1gbit -- "$(readlink -f tools/cluster/cluster_probe)" --tour
exit $status
