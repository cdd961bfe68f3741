#!/usr/bin/env bash
# A cluster on one machine: "nodes" as network namespaces, joined through a bridge by veth links
# that a token-bucket filter (tc tbf) slows to a network's rate, and OpenMPI across them exactly
# as across real hosts: shared memory (vader) between the ranks of one node, TCP over the slow
# link between nodes.
#
#   tools/cluster/cluster.sh check              can it work here? (exit 0, or 2 with the reason)
#   tools/cluster/cluster.sh run [options] -- PROGRAM [ARGS...]
#       --nodes M            namespace nodes (default 2; 1 to 8)
#       --ranks-per-node G   MPI processes on each node (default 2; 1 to 8)
#       --rate RATE          each node's link, as tc writes rates: 1gbit (default), 100mbit,
#                            2.5gbit, 800kbit; "none" for an unlimited veth
#       --timeout S          stop the run after S seconds (default 900): everything is killed
#       --cut-link NODE@S    take node NODE's link down S seconds into the run (a failure drill)
#       --mca-verbose        print which transport OpenMPI picked between each pair
#     makes the cluster, measures raw TCP from node 0 to node 1 (one second), starts
#     mpirun -np M*G across the nodes (rank r on node r/G), then removes everything it made.
#   tools/cluster/cluster.sh cleanup            remove what a killed run left behind
#
# Every rank gets BOOK_CLUSTER_NODES, BOOK_CLUSTER_RANKS_PER_NODE, BOOK_CLUSTER_RATE,
# BOOK_CLUSTER_RATE_BITS and BOOK_CLUSTER_TCP_BYTES_PER_S (chapters/03_collectives/cluster.h reads
# them), and BOOK_RESULTS_DIR when it is set. All addresses are in 10.231.0.0/24, which exists only
# inside the namespaces this script makes; no traffic leaves them. One cluster at a time: a second
# run waits for the first (a lock), so two measurements never share the machine's cores.
set -euo pipefail

readonly PREFIX=bookc                 # every name this script makes starts with it
readonly SUBNET=10.231.0              # node k is $SUBNET.$((k + 1)); nothing else uses it
readonly STATE=/run/book-cluster      # the lock
readonly MAX_NODES=8 MAX_PER_NODE=8
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

die() { echo "cluster: $*" >&2; exit 1; }
say() { echo "cluster: $*" >&2; }

# Why the cluster cannot be made here, or nothing.
why_not() {
  [[ $(id -u) == 0 ]] || { echo "it needs root (network namespaces and tc): run it as root"; return; }
  command -v ip >/dev/null || { echo "'ip' (iproute2) is not installed: apt-get install iproute2"; return; }
  command -v tc >/dev/null || { echo "'tc' (iproute2) is not installed: apt-get install iproute2"; return; }
  command -v mpirun >/dev/null ||
    { echo "mpirun is not installed: run tools/setup.sh (it installs openmpi-bin)"; return; }
  command -v unshare >/dev/null || { echo "'unshare' (util-linux) is not installed"; return; }
  local probe=bookprobe$$  # not under $PREFIX: a run cleaning up leftovers must not take it
  if ! ip netns add "$probe" 2>/dev/null; then
    echo "this machine does not permit network namespaces (ip netns add failed; a container " \
      "without CAP_SYS_ADMIN cannot make them)"
    return
  fi
  local ok=true
  ip -n "$probe" link add ${PREFIX}t0 type veth peer name ${PREFIX}t1 2>/dev/null || ok=false
  $ok || { ip netns del "$probe"; echo "veth links cannot be made here (ip link add type veth failed)"; return; }
  ip -n "$probe" link set ${PREFIX}t0 up 2>/dev/null
  ip netns exec "$probe" tc qdisc add dev ${PREFIX}t0 root tbf rate 1gbit burst 128kb latency 50ms \
    2>/dev/null || ok=false
  ip netns del "$probe"
  $ok || echo "tc's tbf qdisc is not available in this kernel (sch_tbf), so links cannot be rate-limited"
}

# Bits per second of a tc rate ("2.5gbit"), or nothing when it does not parse.
rate_bits() {
  local rate=${1,,}
  [[ $rate =~ ^([0-9]+(\.[0-9]+)?)(bit|kbit|mbit|gbit)$ ]] || return 0
  local scale
  case ${BASH_REMATCH[3]} in bit) scale=1 ;; kbit) scale=1000 ;; mbit) scale=1000000 ;; gbit) scale=1000000000 ;; esac
  awk -v v="${BASH_REMATCH[1]}" -v s="$scale" 'BEGIN { b = v * s; if (b >= 8000) printf "%.0f", b }'
}

# The namespaces a run of this script made and did not remove.
leftovers() { ip netns list 2>/dev/null | awk -v p="$PREFIX" 'index($1, p) == 1 { print $1 }'; }

# Kills every process inside our namespaces, then deletes them (their veths go with them).
remove_namespaces() {
  local ns pids
  for ns in $(leftovers); do
    pids=$(ip netns pids "$ns" 2>/dev/null || true)
    [[ -n $pids ]] && kill -KILL $pids 2>/dev/null || true
  done
  for ns in $(leftovers); do
    ip netns del "$ns" 2>/dev/null || true
  done
}

take_lock() {
  mkdir -p "$STATE"
  exec 9>"$STATE/lock"
  if ! flock -n 9; then
    say "another cluster run holds $STATE/lock; waiting for it (up to 15 minutes)"
    flock -w 900 9 || die "the lock is still held after 15 minutes: see 'ps -ef | grep cluster.sh'"
  fi
  # We hold the lock, so any namespace of ours is what a killed run left behind. (Every process
  # the run starts closes the lock's descriptor, so a killed run's orphans never hold it.)
  local old
  old=$(leftovers | tr '\n' ' ')
  if [[ -n $old ]]; then
    say "removing what a killed run left behind: $old"
    remove_namespaces
  fi
}

ns_node() { echo "${PREFIX}n$1"; }

make_cluster() {
  local nodes=$1 rate=$2 k
  ip netns add ${PREFIX}sw
  ip -n ${PREFIX}sw link add br0 type bridge
  ip -n ${PREFIX}sw link set br0 up
  for ((k = 0; k < nodes; k++)); do
    local ns
    ns=$(ns_node $k)
    ip netns add "$ns"
    ip link add ${PREFIX}n$k type veth peer name ${PREFIX}b$k
    ip link set ${PREFIX}n$k netns "$ns"
    ip link set ${PREFIX}b$k netns ${PREFIX}sw
    ip -n ${PREFIX}sw link set ${PREFIX}b$k master br0
    ip -n ${PREFIX}sw link set ${PREFIX}b$k up
    ip -n "$ns" link set ${PREFIX}n$k name eth0
    ip -n "$ns" addr add $SUBNET.$((k + 1))/24 dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" link set lo up
    # The network: each node's egress is rate-limited; a node's traffic to another passes its own
    # link's filter (and the bridge's side of the other's is unlimited), so a transfer between
    # two nodes runs at the rate.
    [[ $rate == none ]] || ip netns exec "$ns" tc qdisc add dev eth0 root tbf rate "$rate" \
      burst 128kb latency 50ms
    # A fabric notices a dead link in seconds, not TCP's default quarter of an hour: fewer
    # retransmissions before a connection is declared lost (these settings are per namespace).
    ip netns exec "$ns" sysctl -qw net.ipv4.tcp_retries2=4
  done
}

# Raw TCP bytes per second from node 0 to node 1 over one second, or 0 with one node.
measure_tcp() {
  local nodes=$1
  ((nodes >= 2)) || { echo 0; return; }
  local out
  ip netns exec "$(ns_node 1)" /usr/bin/python3 "$here/tcp_probe.py" serve $SUBNET.2 5199 \
    >"$workdir/tcp" 2>&1 9>&- &
  local server=$!
  sleep 0.3
  ip netns exec "$(ns_node 0)" /usr/bin/python3 "$here/tcp_probe.py" send $SUBNET.2 5199 1.0 ||
    { kill $server 2>/dev/null; echo 0; return; }
  wait $server || true
  out=$(tail -1 "$workdir/tcp")
  [[ $out =~ ^[0-9]+$ ]] && echo "$out" || echo 0
}

# The agent OpenMPI calls as `AGENT HOST COMMAND...` to start its daemon on a node: it enters the
# node's namespace (and a UTS namespace named after the node, so each "machine" has its own
# hostname, as real ones do).
write_agent() {
  cat >"$workdir/agent" <<EOF
#!/bin/sh
host=\$1; shift
case \$host in
  $SUBNET.*) k=\$(( \${host##*.} - 1 )) ;;
  *) echo "cluster agent: unknown host \$host" >&2; exit 1 ;;
esac
exec ip netns exec ${PREFIX}n\$k unshare --uts sh -c "hostname ${PREFIX}-node\$k; exec \$*"
EOF
  chmod +x "$workdir/agent"
}

cmd_run() {
  local nodes=2 per_node=2 rate=1gbit timeout=900 cut="" verbose=false
  while (($#)); do
    case $1 in
      --nodes) nodes=${2:-}; shift 2 ;;
      --ranks-per-node) per_node=${2:-}; shift 2 ;;
      --rate) rate=${2:-}; shift 2 ;;
      --timeout) timeout=${2:-}; shift 2 ;;
      --cut-link) cut=${2:-}; shift 2 ;;
      --mca-verbose) verbose=true; shift ;;
      --) shift; break ;;
      *) die "unknown option '$1' of run (see the top of $0)" ;;
    esac
  done
  (($#)) || die "run needs a program after --: cluster.sh run [options] -- PROGRAM [ARGS...]"
  [[ $nodes =~ ^[0-9]+$ ]] && ((nodes >= 1 && nodes <= MAX_NODES)) ||
    die "--nodes '$nodes': give a whole number from 1 to $MAX_NODES"
  [[ $per_node =~ ^[0-9]+$ ]] && ((per_node >= 1 && per_node <= MAX_PER_NODE)) ||
    die "--ranks-per-node '$per_node': give a whole number from 1 to $MAX_PER_NODE"
  [[ $timeout =~ ^[0-9]+$ ]] && ((timeout >= 1)) || die "--timeout '$timeout': give whole seconds, at least 1"
  local bits=0
  if [[ ${rate,,} == none ]]; then
    rate=none
  else
    bits=$(rate_bits "$rate")
    [[ -n $bits ]] || die "--rate '$rate' does not parse: write it as tc does, e.g. 1gbit, 100mbit, 2.5gbit (at least 8kbit), or none"
  fi
  local cut_node="" cut_after=""
  if [[ -n $cut ]]; then
    [[ $cut =~ ^([0-9]+)@([0-9]+(\.[0-9]+)?)$ ]] && ((BASH_REMATCH[1] < nodes)) ||
      die "--cut-link '$cut': write NODE@SECONDS with a node from 0 to $((nodes - 1)), e.g. 1@5"
    cut_node=${BASH_REMATCH[1]} cut_after=${BASH_REMATCH[2]}
  fi
  local program=$1
  shift
  [[ -x $program ]] || die "'$program' is not an executable file (build it, and give its path, e.g. \$(readlink -f bazel-bin/...))"
  [[ $program == /* ]] || program=$(readlink -f "$program")
  local reason
  reason=$(why_not)
  [[ -z $reason ]] || { echo "cluster: cannot make the cluster here: $reason" >&2; exit 2; }

  take_lock
  workdir=$(mktemp -d /tmp/book-cluster.XXXXXX)
  trap 'rc=$?; trap - EXIT INT TERM; remove_namespaces; rm -rf "$workdir"; exit $rc' EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  make_cluster "$nodes" "$rate"
  write_agent
  local tcp
  tcp=$(measure_tcp "$nodes")
  local links="links of $rate" measured="one node: no link to measure"
  [[ $rate == none ]] && links="unlimited links"
  ((nodes < 2)) || measured="raw TCP node 0 -> node 1: $(awk -v b="$tcp" 'BEGIN { printf "%.1f MB/s", b / 1e6 }')"
  say "$nodes node(s) x $per_node rank(s), $links; $measured"

  local hosts="" k
  for ((k = 0; k < nodes; k++)); do hosts+="${hosts:+,}$SUBNET.$((k + 1)):$per_node"; done
  export BOOK_CLUSTER_NODES=$nodes BOOK_CLUSTER_RANKS_PER_NODE=$per_node BOOK_CLUSTER_RATE=$rate
  export BOOK_CLUSTER_RATE_BITS=$bits BOOK_CLUSTER_TCP_BYTES_PER_S=$tcp TMPDIR=$workdir
  local exports=(-x BOOK_CLUSTER_NODES -x BOOK_CLUSTER_RANKS_PER_NODE -x BOOK_CLUSTER_RATE
    -x BOOK_CLUSTER_RATE_BITS -x BOOK_CLUSTER_TCP_BYTES_PER_S -x TMPDIR)
  [[ -n ${BOOK_RESULTS_DIR:-} ]] && exports+=(-x BOOK_RESULTS_DIR)
  local mca=(--mca plm_rsh_agent "$workdir/agent" --mca btl self,vader,tcp
    --mca btl_tcp_if_include $SUBNET.0/24 --mca oob_tcp_if_include $SUBNET.0/24
    --mca btl_vader_single_copy_mechanism none
    --mca oob_tcp_keepalive_time 2 --mca oob_tcp_keepalive_intvl 1 --mca oob_tcp_keepalive_probes 3)
  $verbose && mca+=(--mca btl_base_verbose 30)
  if [[ -n $cut_node ]]; then
    (sleep "$cut_after"; say "cutting node $cut_node's link (ip link set eth0 down)"
     ip -n "$(ns_node "$cut_node")" link set eth0 down) 9>&- &
  fi
  local rc=0
  timeout --kill-after=5 "$timeout" ip netns exec "$(ns_node 0)" unshare --uts sh -c \
    "hostname ${PREFIX}-node0; exec \"\$@\"" sh mpirun --allow-run-as-root -np $((nodes * per_node)) \
    --host "$hosts" --map-by slot "${mca[@]}" "${exports[@]}" "$program" "$@" 9>&- || rc=$?
  ((rc != 124 && rc != 137)) || say "the run passed --timeout $timeout s and was stopped"
  return $rc
}

cmd_check() {
  local reason
  reason=$(why_not)
  [[ -z $reason ]] || { echo "cluster: cannot make the cluster here: $reason"; exit 2; }
  echo "cluster: this machine can make the namespace cluster"
}

cmd_cleanup() {
  [[ $(id -u) == 0 ]] || die "cleanup needs root, as the run did"
  local old
  old=$(leftovers | tr '\n' ' ')
  if [[ -z $old ]]; then
    echo "cluster: nothing to remove"
    return
  fi
  mkdir -p "$STATE"
  exec 9>"$STATE/lock"
  flock -n 9 || die "a cluster run is in progress (it holds $STATE/lock); it removes its own namespaces"
  remove_namespaces
  echo "cluster: removed $old"
}

case ${1:-} in
  run) shift; cmd_run "$@" ;;
  check) cmd_check ;;
  cleanup) cmd_cleanup ;;
  *) die "usage: cluster.sh check | run [options] -- PROGRAM [ARGS...] | cleanup (see the top of $0)" ;;
esac
