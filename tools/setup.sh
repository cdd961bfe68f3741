#!/usr/bin/env bash
# Installs, from Debian's (or Ubuntu's) package archive, everything the book builds and runs with.
# Idempotent: when everything is present it only checks and exits in about a second.
#   tools/setup.sh            install what is missing (as root, or through sudo, which may ask
#                             for your password)
#   tools/setup.sh --check    only say what is missing; exit 1 if anything is
# If another apt or dpkg holds the package lock (an unattended upgrade, say), it says which
# process and waits for it, up to BOOK_SETUP_LOCK_WAIT seconds (default 300), then stops.
# The CUDA toolkit is not a Debian package: install NVIDIA's CUDA 13 under /usr/local/cuda (or set
# CUDA_PATH) to build the GPU chapters; without it they are skipped and everything else builds.
set -euo pipefail

PACKAGES=(
  # the build: Bazel (Debian's offline-friendly bootstrap build) and the C++ toolchain
  bazel-bootstrap bazel-skylib bazel-platforms g++ default-jdk-headless
  # tests and benchmarks
  libgtest-dev libgmock-dev libbenchmark-dev
  # peers: BLAS for GEMM (ch. 1), MPI for collectives (ch. 3), libtorch for training (ch. 4),
  # PyTorch DDP for data parallelism (ch. 5; run by Debian's /usr/bin/python3), oneDNN's INT8
  # matmul for quantisation (ch. 14)
  libopenblas-dev libblis-dev libopenmpi-dev openmpi-bin libtorch-dev python3-torch libdnnl-dev
  # plots and the documentation site
  gnuplot-nox doxygen graphviz doxygen-awesome-css libjs-mathjax
  # small tools the scripts use
  ca-certificates procps
)

die() { echo "setup: $*" >&2; exit 1; }

# The HTTP server of chapter 11: cpp-httplib (Debian builds it as a shared library with OpenSSL,
# zlib and brotli) and nlohmann's JSON (header-only).
PACKAGES+=(libcpp-httplib-dev nlohmann-json3-dev)

# Also installed: a font with Chinese glyphs, so the interview answers (面试回答) and the glossary
# render in a browser on this machine (kept apart from the list above so edits to it merge cleanly).
PACKAGES+=(fonts-noto-cjk)

# The holder of a package-manager lock, as "name (pid N)", or nothing when it is free. apt and dpkg
# take fcntl locks, which /proc/locks lists by inode; this needs no tool beyond coreutils.
LOCKS=(/var/lib/dpkg/lock-frontend /var/lib/dpkg/lock /var/lib/apt/lists/lock /var/cache/apt/archives/lock)
lock_holder() {
  local lock inode pid
  for lock in "${LOCKS[@]}"; do
    [[ -e $lock ]] || continue
    inode=$(stat -c %i "$lock" 2>/dev/null) || continue
    pid=$(awk -v inode="$inode" '{ split($6, id, ":"); if (id[3] == inode) { print $5; exit } }' /proc/locks 2>/dev/null)
    [[ -n $pid && -d /proc/$pid ]] || continue
    echo "$(cat "/proc/$pid/comm" 2>/dev/null || echo '?') (pid $pid) holds $lock"
    return
  done
}

# Waits (bounded) for another apt or dpkg to finish, saying which one it is.
wait_for_package_lock() {
  local limit=${BOOK_SETUP_LOCK_WAIT:-300} waited=0 holder
  holder=$(lock_holder)
  [[ -z $holder ]] && return 0
  echo "setup: another package manager is busy: $holder; waiting up to ${limit} s for it to finish"
  while [[ -n $holder ]] && ((waited < limit)); do
    sleep 5
    waited=$((waited + 5))
    holder=$(lock_holder)
  done
  [[ -z $holder ]] ||
    die "the package lock is still taken after ${limit} s: $holder. Let it finish (or stop it), then run tools/setup.sh again"
  echo "setup: the package lock is free after ${waited} s"
}

check_only=false
case "${1:-}" in
  --check) check_only=true ;;
  "") ;;
  *) die "unknown option '$1' (use --check, or no option)" ;;
esac

command -v dpkg-query >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1 ||
  die "this needs a Debian or Ubuntu system with apt-get; install the packages listed in tools/setup.sh by other means"

if [[ -r /etc/os-release ]]; then
  # shellcheck disable=SC1091
  . /etc/os-release
  case "${ID:-}:${ID_LIKE:-}" in
    debian:* | ubuntu:* | *:*debian*) ;;
    *) die "unsupported distribution '${PRETTY_NAME:-$ID}': the book is set up for Debian 12 (bookworm) or newer" ;;
  esac
fi

# One dpkg-query for all of them (one call per package takes seconds on a busy machine).
declare -A status=()
while read -r name state; do
  status[$name]=$state
done < <(dpkg-query -W -f='${Package} ${db:Status-Status}\n' "${PACKAGES[@]}" 2>/dev/null || true)
missing=()
for package in "${PACKAGES[@]}"; do
  [[ "${status[$package]:-}" == installed ]] || missing+=("$package")
done

if ((${#missing[@]} == 0)); then
  echo "setup: all ${#PACKAGES[@]} packages are installed"
  exit 0
fi
if $check_only; then
  echo "setup: missing: ${missing[*]} (tools/setup.sh installs them)"
  exit 1
fi

# Root runs apt-get itself; anyone else through sudo, which asks for a password if it needs one.
if ((EUID == 0)); then
  as_root=()
elif command -v sudo >/dev/null 2>&1; then
  as_root=(sudo)
  echo "setup: installing needs root: using sudo (it may ask for your password)"
else
  die "${#missing[@]} packages are missing (${missing[*]}) and installing them needs root, but sudo is not installed: run tools/setup.sh as root"
fi

echo "setup: installing ${#missing[@]} packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
log=$(mktemp /tmp/book-setup.XXXXXX.log)
# apt's own wait for the dpkg lock, in case another apt starts between our check and its start.
apt_options=(-o "DPkg::Lock::Timeout=${BOOK_SETUP_LOCK_WAIT:-300}")
# Why apt-get failed, in one line: a held lock, an unreachable archive, or the distribution.
explain_failure() {
  tail -5 "$log" >&2
  if grep -q 'Could not get lock\|Unable to lock\|is held by process' "$log"; then
    die "another package manager holds the lock (${1}): $(grep -m1 'is held by process\|Could not get lock' "$log"). Wait for it to finish, then run tools/setup.sh again"
  elif grep -qi 'Temporary failure resolving\|Could not resolve\|Failed to fetch\|Connection failed' "$log"; then
    die "${1} could not reach the package archive (full log: $log): check the network and /etc/apt/sources.list"
  elif grep -q 'Unable to locate package\|has no installation candidate' "$log"; then
    die "${1}: a package is not in this distribution's archive (full log: $log); the book is set up for Debian 12 (bookworm) or newer"
  fi
  die "${1} failed (full log: $log)"
}
wait_for_package_lock
"${as_root[@]}" apt-get "${apt_options[@]}" update -qq >"$log" 2>&1 || explain_failure "apt-get update"
wait_for_package_lock
"${as_root[@]}" apt-get "${apt_options[@]}" install -y -qq --no-install-recommends "${missing[@]}" >>"$log" 2>&1 ||
  explain_failure "apt-get install"
rm -f "$log"
echo "setup: done; next: bazel test //..."
