#!/usr/bin/env bash
# Session 25: column parts for the tensor-core matvecs (step 72).
# bin/main = main (4f49714); bin/parts = branch next/kq-parts (memra_mvt
# splits a row's superblocks into MEMRA_MV_PARTS column parts, block b
# taking part b % parts, the parts meeting through a ticket per 16-row tile
# and added in part order; only products without a fused norm: the 9B's
# 4096 x 4096 and 4096 x 12288, the 0.8B's 1,024-row outputs); bin/partsr
# = next/kq-parts-r (the same, the wide Q4_K ring 3 slots and Q6_K's 2, so
# a part of 4,096 columns fits 3 blocks an SM). Kernel tests of parts, the
# graph chains at P = 1..4, a gate and greedy tokens with parts, then bench
# at 1k over the configurations twice. carry ["bin"]. ~8 minutes.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b 9b" "q4_k q6_k"
el "matvec GPU tests (parts)"
(cd engine/gpu && timeout 150 "$R/bin/parts/engine_gpu.test" -test.run 'KernelMatvec|MatvecShared' -test.v -test.timeout 140s > "$OUT/gputest-parts.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|panic" "$OUT/gputest-parts.txt" | grep -v "^    --- PASS" | head -20
echo "parts subtests: $(grep -c -- '--- PASS.*parts' "$OUT/gputest-parts.txt") PASS, $(grep -c -- '--- FAIL.*parts' "$OUT/gputest-parts.txt") FAIL"
chain main '(Q4_K|Q6_K)/(4096x12288|4096x4096)/.*/graph'
for b in parts partsr; do for p in 1 2 3 4; do
  MEMRA_MV_PARTS=$p chain $b '(Q4_K|Q6_K)/(4096x12288|4096x4096)/.*/graph' | sed "s/^$b /$b-P$p /"
done; done
wait_synth
el "gate, greedy (parts, P = 3)"
MEMRA_MV_PARTS=3 gate parts $M/9b-q4_k.gguf 64 256 0
MEMRA_MV_PARTS=2 gate parts $M/0.8b-q6_k.gguf 300 256 1
MEMRA_MV_PARTS=3 greedy parts $M/0.8b-q4_k.gguf
bench_env() {
  local b=$1 p=$2 d=/tmp/bn/$1-P$2-$(date +%s%N)
  mkdir -p "$d"
  el "bench 1k ($b P=$p)"
  MEMRA_MV_PARTS=$p timeout 100 "./bin/$b/bench" -model "$M/9b-q4_k.gguf,$M/9b-q6_k.gguf,$M/0.8b-q4_k.gguf,$M/0.8b-q6_k.gguf" -ctx 1024 -reps 3 -tokens 64 -out "$d" 2>"$d/stderr.txt" \
    | grep -E '\| graph \|' | cut -d'|' -f2,4,5,6,9,13
}
for round in 1 2; do
  bench_env main 1
  for p in 1 2 3 4; do bench_env parts $p; done
  for p in 3 4; do bench_env partsr $p; done
done
tar czf "$OUT/bench.tgz" -C /tmp bn
el done
