#!/usr/bin/env bash
# Session 39: the 27B preset's 5,120-row matrices (its output projections
# and down projection) run the plain kernels, whose units of 32 rows give 160
# blocks on 132 SMs (run263's profile: 5120 x 17408 q8_0 at 2.18 TB/s, 5120
# x 6144 at 1.70). Branch next/wide-5120 reads the row bounds from the
# environment: MEMRA_Q8_WIDE (rows up to which q8_0 takes its wide kernels;
# 4096 on main), MEMRA_Q8_WAVE (up to which the wide form is the wave one),
# MEMRA_KQ_WIDE (the K-quants' bound). Bench graph at 1k on 27B q8_0 with
# 5,120 rows on the plain (main's), wave and wide kernels in rotation, then
# 27B Q4_K plain against wide; the gates and 24 greedy tokens cuda against
# cpu with the wave rule. carry ["bin"]. ~7 min.
set -u
source scripts/gpu/lib.sh
start_run
el "synth 27b q8_0, q4_k"
synth main "27b" "q8_0"; SQ8=$SYNTH
synth main "27b" "q4_k"; SQ4=$SYNTH
SYNTH=$SQ8; wait_synth
el "27b-q8_0 synthesised"
b27() { # NAME MODEL ENV...: bench graph at 1k with the environment given
  local name=$1 model=$2; shift 2
  local d=/tmp/bn/$name-$(date +%s%N); mkdir -p "$d"
  el "bench $name ($*)"
  env "$@" timeout 100 ./bin/main/bench -model "$model" -ctx 1024 -reps 3 -tokens 64 -out "$d" 2>"$d/stderr.txt" | grep -E '\| graph \|' | cut -d'|' -f2,4,5,6,9,13
}
mkdir -p /tmp/bn
for r in 1 2; do
  b27 q8-plain "$M/27b-q8_0.gguf" MEMRA_Q8_WIDE=4096
  b27 q8-wave "$M/27b-q8_0.gguf" MEMRA_Q8_WIDE=5120
  b27 q8-wide "$M/27b-q8_0.gguf" MEMRA_Q8_WIDE=5120 MEMRA_Q8_WAVE=4096
done
el "gates and greedy, q8_0 5,120 rows on the wave kernel"
export MEMRA_Q8_WIDE=5120
gate main "$M/27b-q8_0.gguf" 64 128 0
gate main "$M/27b-q8_0.gguf" 300 64 1
greedy main "$M/27b-q8_0.gguf"
unset MEMRA_Q8_WIDE
el "bench -profile 8, 27b-q8_0, wave"
MEMRA_Q8_WIDE=5120 timeout 100 ./bin/main/bench -model "$M/27b-q8_0.gguf" -ctx 1024 -reps 1 -tokens 16 -profile 8 -out /tmp/p 2>/dev/null | grep -E '^\| matvec' | head -8
for i in $(seq 1 24); do kill -0 $SQ4 2>/dev/null || break; sleep 5; done
if kill -0 $SQ4 2>/dev/null; then el "27b-q4_k synth still running: skipped"; else
  el "27b-q4_k synthesised"
  for r in 1 2; do
    b27 q4-plain "$M/27b-q4_k.gguf" MEMRA_KQ_WIDE=4096
    b27 q4-wide "$M/27b-q4_k.gguf" MEMRA_KQ_WIDE=5120
  done
  export MEMRA_KQ_WIDE=5120; gate main "$M/27b-q4_k.gguf" 64 64 0; unset MEMRA_KQ_WIDE
fi
tar czf "$OUT/bench-rotation.tgz" -C /tmp bn
el done
