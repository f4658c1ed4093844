#!/usr/bin/env bash
# bins.sh NAME=REV[+PATCH][:BIN,...]...: builds the GPU machine's binaries
# of each revision (go tool mage cuda:bins in a throwaway worktree,
# CGO_ENABLED=0) into bin/NAME/ and packs them all into bin/bin.txz, which
# the run scripts' start_run unpacks (lib.sh); pass carry ["bin"] to the
# device call. With +PATCH (a path from the repository root) the patch is
# applied to REV first and, where it touches kernels/, the fatbin rebuilt
# (nvcc needed: README.md); :BIN,... packs only those of memra, gate, bench
# and engine_gpu.test (all four without it). E.g.
#   bash scripts/gpu/bins.sh main=main:memra,bench kql=main+scripts/gpu/patches/kq-loops.patch
# for run343.sh. Work prepared without a GPU is kept on main as such a
# patch: branches do not outlive a session's checkout. One revision's four
# pack to ~13 MB, and the device takes the tracked tree (~52 MB) and bin/
# together up to 64 MiB: a second revision fits only in part.
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: bins.sh NAME=REV..." >&2; exit 2; }
root=$(git rev-parse --show-toplevel)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
for arg in "$@"; do
  name=${arg%%=*} spec=${arg#*=}
  bins="memra gate bench engine_gpu.test"
  case $spec in *:*) bins=${spec##*:}; bins=${bins//,/ }; spec=${spec%:*} ;; esac
  rev=${spec%%+*} patch=""
  [ "$spec" = "$rev" ] || patch=${spec#*+}
  [ -n "$name" ] && [ "$name" != "$arg" ] || { echo "bins.sh: $arg: want NAME=REV[+PATCH]" >&2; exit 2; }
  wt="$stage/w-$name"
  git -C "$root" worktree add -q --detach "$wt" "$rev"
  if [ -n "$patch" ]; then
    git -C "$wt" apply "$root/$patch"
    if git -C "$wt" diff --name-only | grep -q '^kernels/.*\.cuh\?$'; then
      (cd "$wt" && go tool mage cuda:kernels)
    fi
  fi
  (cd "$wt" && go tool mage cuda:bins)
  mkdir -p "$stage/bin/$name"
  for b in $bins; do cp "$wt/bin/$b" "$stage/bin/$name/"; done
  git -C "$root" worktree remove --force "$wt"
  echo "bin/$name: $(git -C "$root" rev-parse --short "$rev") ($rev)${patch:+ + $patch}"
done
mkdir -p "$root/bin"
XZ_OPT=-9 tar cJf "$root/bin/bin.txz" -C "$stage/bin" .
ls -l "$root/bin/bin.txz"
