#!/usr/bin/env bash
# Session 3 A/B: run12's fusions undone one at a time (MEMRA_FUSE_EXP, read
# at load), plus "presilu" (silu(z) stored by the input matvec's epilogue so
# the output matvec's gated-norm prologue has no expf). Gate bench lines
# (P=64 N=256: graph tok/s, nodes/graph, PASS), variants interleaved, two rounds.
set -u
exec > >(tee -a $OUT/log.txt) 2>&1
M=/tmp/models; mkdir -p $M
T0=$(date +%s); el() { echo "[t+$(( $(date +%s) - T0 ))s] $*"; }
pids=""
for p in 0.8b 9b; do for t in bf16 q8_0; do
  [ -s $M/$p-$t.gguf ] || { ./bin/memra synth --arch qwen35 --preset $p --type $t -o $M/$p-$t.gguf >/dev/null 2>&1 & pids="$pids $!"; }
done; done
[ -n "$pids" ] && wait $pids
el "A/B"
g() { local r; r=$(MEMRA_FUSE_EXP=$2 timeout 120 ./bin/gate $M/$1.gguf 64 256 bench 2>/dev/null | grep -E "decode tok/s|gate (PASS|FAIL)" | sed -E 's/.*eager=([0-9.]+) +graph=([0-9.]+).*nodes\/graph=([0-9]+).*/eager=\1 graph=\2 nodes=\3/; s/Phase-3 gate (PASS|FAIL).*/\1/' | tr '\n' ' '); echo "$1 [${2:-all}]: $r"; }
for round in 1 2; do
  for m in 0.8b-bf16 0.8b-q8_0 9b-q8_0 9b-bf16; do
    [ $round = 2 ] && [ $m = 9b-bf16 ] && continue
    for v in "" noconv nognorm noargmax presilu noconv,nognorm,noargmax; do g $m "$v"; done
  done
done
el done
