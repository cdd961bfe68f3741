#!/usr/bin/env bash
# Installs, from Debian's (or Ubuntu's) package archive, everything the book builds and runs with.
# Idempotent: when everything is present it only checks and exits in about a second.
#   tools/setup.sh            install what is missing (as root, or through sudo)
#   tools/setup.sh --check    only say what is missing; exit 1 if anything is
# The CUDA toolkit is not a Debian package: install NVIDIA's CUDA 13 under /usr/local/cuda (or set
# CUDA_PATH) to build the GPU chapters; without it they are skipped and everything else builds.
set -euo pipefail

PACKAGES=(
  # the build: Bazel (Debian's offline-friendly bootstrap build) and the C++ toolchain
  bazel-bootstrap bazel-skylib bazel-platforms g++ default-jdk-headless
  # tests and benchmarks
  libgtest-dev libgmock-dev libbenchmark-dev
  # peers: BLAS for GEMM (ch. 1), MPI for collectives (ch. 3), libtorch for training (ch. 4),
  # PyTorch DDP for data parallelism (ch. 5; run by Debian's /usr/bin/python3)
  libopenblas-dev libblis-dev libopenmpi-dev openmpi-bin libtorch-dev python3-torch
  # plots and the documentation site
  gnuplot-nox doxygen graphviz doxygen-awesome-css libjs-mathjax
  # small tools the scripts use
  ca-certificates procps
)

die() { echo "setup: $*" >&2; exit 1; }

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

missing=()
for package in "${PACKAGES[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$package" 2>/dev/null || true)
  [[ "$status" == installed ]] || missing+=("$package")
done

if ((${#missing[@]} == 0)); then
  echo "setup: all ${#PACKAGES[@]} packages are installed"
  exit 0
fi
if $check_only; then
  echo "setup: missing: ${missing[*]} (run tools/setup.sh as root to install them)"
  exit 1
fi

if ((EUID == 0)); then
  as_root=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  as_root=(sudo)
else
  die "${#missing[@]} packages are missing and installing them needs root: run 'sudo tools/setup.sh' (or as root)"
fi

echo "setup: installing ${#missing[@]} packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq >/dev/null ||
  die "apt-get update failed: check /etc/apt/sources.list and that the package archive is reachable"
if ! "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/tmp/book-setup.log 2>&1; then
  tail -5 /tmp/book-setup.log >&2
  die "apt-get install failed (full log: /tmp/book-setup.log); is this Debian 12 or newer?"
fi
echo "setup: done; next: bazel test //..."
