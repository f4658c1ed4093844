#!/usr/bin/env bash
# bins.sh NAME=REV[+PATCH...][:BIN,...]...: builds the GPU machine's
# binaries of each revision (go tool mage cuda:bins in a throwaway
# worktree, CGO_ENABLED=0, without symbol tables: -ldflags=-s) into
# bin/NAME/ and packs them all into bin/bin.txz, which the run scripts'
# start_run unpacks (lib.sh); pass carry ["bin"] to the device call. Each
# +PATCH (a path from the repository root) is applied to REV in turn and,
# where they touch kernels/, the fatbin rebuilt (nvcc needed: README.md);
# :BIN,... packs only those of memra, gate, bench, engine_gpu.test and
# engine_cuda.test (the first four without it; go tool mage cuda:bins
# builds all five). E.g., for run343.sh,
#   bash scripts/gpu/bins.sh main=main:memra,bench \
#     kql=main+scripts/gpu/patches/kq-loops.patch+scripts/gpu/patches/kq-nobreak.patch
# Work prepared without a GPU is kept on main as such patches: branches do
# not outlive a session's checkout. The device takes the tracked tree (~52
# MB) and bin/ together up to 64 MiB; a revision's four binaries pack to
# ~9 MB (~13 with symbol tables), each more with another fatbin ~1-2 MB.
# REV and the patch paths may not hold ':', '+' or spaces.
# BINS_ARCHS=90 builds a patched revision's fatbin for those SMs only, no
# PTX (go tool mage cuda:kernels with MEMRA_ARCHS): about a quarter of the
# nvcc time and a smaller bin.txz, for runs on that GPU alone; an unpatched
# revision keeps its committed fatbin.
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: bins.sh NAME=REV..." >&2; exit 2; }
root=$(git rev-parse --show-toplevel)
stage=$(mktemp -d)
trap 'rm -rf "$stage"; git -C "$root" worktree prune' EXIT
for arg in "$@"; do
  name=${arg%%=*} spec=${arg#*=}
  bins="memra gate bench engine_gpu.test"
  case $spec in *:*) bins=${spec##*:}; bins=${bins//,/ }; spec=${spec%:*} ;; esac
  rev=${spec%%+*} patches=""
  [ "$spec" = "$rev" ] || patches=${spec#*+}
  [ -n "$name" ] && [ "$name" != "$arg" ] || { echo "bins.sh: $arg: want NAME=REV[+PATCH]" >&2; exit 2; }
  wt="$stage/w-$name"
  git -C "$root" worktree add -q --detach "$wt" "$rev"
  built=$(git -C "$wt" rev-parse --short HEAD)
  if [ -n "$patches" ]; then
    for p in ${patches//+/ }; do git -C "$wt" apply --index "$root/$p"; done
    if [ -n "$(git -C "$wt" diff --cached --name-only -- 'kernels/*.cu' 'kernels/*.cuh')" ]; then
      (cd "$wt" && MEMRA_ARCHS="${BINS_ARCHS:-}" go tool mage cuda:kernels)
    fi
  fi
  (cd "$wt" && GOFLAGS=-ldflags=-s go tool mage cuda:bins)
  mkdir -p "$stage/bin/$name"
  for b in $bins; do cp "$wt/bin/$b" "$stage/bin/$name/"; done
  git -C "$root" worktree remove --force "$wt"
  echo "bin/$name: $built ($rev)${patches:+ + ${patches//+/ + }}${patches:+${BINS_ARCHS:+ (fatbin: sm_${BINS_ARCHS//,/, sm_} only)}}"
done
mkdir -p "$root/bin"
XZ_OPT=-9 tar cJf "$root/bin/bin.txz" -C "$stage/bin" .
ls -l "$root/bin/bin.txz"
