#!/usr/bin/env bash
# Session 39: run264 found 27B q8_0's 5,120-row matrices faster on the wide
# q8_0 kernel (+6.6%) than on the plain (main) or wave (+3.6%) ones. Here,
# branch next/wide-5120's environment bounds once more: on 9B q8_0, whether
# the plain kernel's other few-unit matrices (12352 x 4096 input projection,
# 10240 x 4096 attention qkv: 386 and 320 units of 32 rows against 396
# blocks) gain on the wide kernel too (MEMRA_Q8_WIDE=12671, MEMRA_Q8_WAVE=4096
# against main's bounds); then 27B q8_0 with 5,120 rows on the wide kernel:
# the gates and 24 greedy tokens cuda against cpu. carry ["bin"]. ~5 min.
set -u
source scripts/gpu/lib.sh
start_run
el "synth 9b q8_0, 27b q8_0"
synth main "9b" "q8_0"; S9=$SYNTH
synth main "27b" "q8_0"; S27=$SYNTH
SYNTH=$S9; wait_synth
b1k() { # NAME MODEL ENV...: bench graph at 1k with the environment given
  local name=$1 model=$2; shift 2
  local d=/tmp/bn/$name-$(date +%s%N); mkdir -p "$d"
  el "bench $name ($*)"
  env "$@" timeout 100 ./bin/main/bench -model "$model" -ctx 1024 -reps 3 -tokens 64 -out "$d" 2>"$d/stderr.txt" | grep -E '\| graph \|' | cut -d'|' -f2,4,5,6,9,13
}
mkdir -p /tmp/bn
for r in 1 2 3; do
  b1k 9b-main "$M/9b-q8_0.gguf" MEMRA_Q8_WIDE=4096
  b1k 9b-wide12671 "$M/9b-q8_0.gguf" MEMRA_Q8_WIDE=12671 MEMRA_Q8_WAVE=4096
done
SYNTH=$S27; wait_synth
el "27b-q8_0: 5,120 rows on the wide kernel"
export MEMRA_Q8_WIDE=5120 MEMRA_Q8_WAVE=4096
gate main "$M/27b-q8_0.gguf" 64 128 0
gate main "$M/27b-q8_0.gguf" 300 64 1
greedy main "$M/27b-q8_0.gguf"
b1k 27b-wide5120 "$M/27b-q8_0.gguf" MEMRA_Q8_WIDE=5120 MEMRA_Q8_WAVE=4096
tar czf "$OUT/bench-rotation.tgz" -C /tmp bn
el done
