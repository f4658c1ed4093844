#!/usr/bin/env bash
# Prepared in session 3, not yet run: docs/perf.md step 12 per kernel family.
# bin/mvexp and bin/mvexp.cubin built here:
#   nvcc -O3 -arch=sm_90 -cubin -o bin/mvexp.cubin engine/internal/mvexp/mvexp.cu
#   CGO_ENABLED=0 go build -o bin/mvexp ./engine/internal/mvexp
# Times the engine's matvec kernels and the mvg_ variants of its template
# (tail batch, next-unit prefetch, more rows per warp for the wide q8_0) on
# every decode shape of both presets, on one block per unit and on the
# engine's resident grid; every output checked against float64, the looping
# grid bit for bit against one block per unit. Then `bench -profile`
# (prepared, not yet run either): each kernel's GPU time in a decode step of
# the four presets at 1k context.
set -u
exec > >(tee -a $OUT/log.txt) 2>&1
T0=$(date +%s); el() { echo "[t+$(( $(date +%s) - T0 ))s] $*"; }
M=/tmp/models; mkdir -p $M
pids=""
for p in 0.8b 9b; do for t in bf16 q8_0; do
  [ -s $M/$p-$t.gguf ] || { ./bin/memra synth --arch qwen35 --preset $p --type $t -o $M/$p-$t.gguf >/dev/null 2>&1 & pids="$pids $!"; }
done; done
el "mvexp"; timeout 300 ./bin/mvexp -cubin bin/mvexp.cubin
[ -n "$pids" ] && wait $pids
el "profile"; mkdir -p /tmp/bp; timeout 200 ./bin/bench -model $M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-bf16.gguf,$M/9b-q8_0.gguf \
  -ctx 1024 -reps 3 -tokens 64 -profile 16 -out /tmp/bp 2>/tmp/bp/stderr.txt
tar czf $OUT/profile.tgz -C /tmp bp
el done
