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
# Without --tour: the chapters' full cluster runs (minutes each); with it, their quick modes.
quick=()
$tour && quick=(--tour)
run probe --nodes 2 --ranks-per-node 2 --rate 1gbit -- "$(readlink -f tools/cluster/cluster_probe)" --tour
run "chapter 3: all-reduce inside a node and across" --nodes 2 --ranks-per-node 2 --rate 1gbit -- \
  "$(readlink -f chapters/03_collectives/busbw_mpi)" --cluster "${quick[@]}"
run "chapter 5: flat and hierarchical, DDP 1 -> 2 nodes" --nodes 2 --ranks-per-node 2 --rate 1gbit -- \
  "$(readlink -f chapters/05_data_parallel/ddp)" --backend mpi --cluster "${quick[@]}"
run "chapters 7 and 8: where each dimension of a 2 x 2 grid sits" --nodes 2 --ranks-per-node 2 \
  --rate 1gbit -- "$(readlink -f chapters/08_pipeline_parallel/pipeline)" --backend mpi --cluster \
  "${quick[@]}"
run "chapter 15: the planner against the measured placements" --nodes 2 --ranks-per-node 2 \
  --rate 1gbit -- "$(readlink -f chapters/15_production_training/planner)" --cluster "${quick[@]}"
exit $status
