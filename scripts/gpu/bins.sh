#!/usr/bin/env bash
# bins.sh NAME=REV...: builds the GPU machine's binaries of each revision
# (go tool mage cuda:bins in a throwaway worktree, CGO_ENABLED=0) into
# bin/NAME/ and packs them all into bin/bin.txz, which the run scripts'
# start_run unpacks (lib.sh); pass carry ["bin"] to the device call. E.g.
#   bash scripts/gpu/bins.sh iq4=next/iq4xs
# for run341.sh. One revision packs to ~13 MB, two to ~21 MB, and the device
# takes the tracked tree (~51 MB) and bin/ together up to 64 MiB: pack two
# only where a script runs both (run340 took bin/main's bench alone).
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: bins.sh NAME=REV..." >&2; exit 2; }
root=$(git rev-parse --show-toplevel)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
for arg in "$@"; do
  name=${arg%%=*} rev=${arg#*=}
  [ -n "$name" ] && [ "$name" != "$arg" ] || { echo "bins.sh: $arg: want NAME=REV" >&2; exit 2; }
  wt="$stage/w-$name"
  git -C "$root" worktree add -q --detach "$wt" "$rev"
  (cd "$wt" && go tool mage cuda:bins)
  mkdir -p "$stage/bin/$name"
  cp "$wt"/bin/{memra,gate,bench,engine_gpu.test} "$stage/bin/$name/"
  git -C "$root" worktree remove --force "$wt"
  echo "bin/$name: $(git -C "$root" rev-parse --short "$rev") ($rev)"
done
mkdir -p "$root/bin"
XZ_OPT=-9 tar cJf "$root/bin/bin.txz" -C "$stage/bin" .
ls -l "$root/bin/bin.txz"
