#!/usr/bin/env bash
# Session 38 (step 93): where gdn_mixout's time goes. bench -profile (each
# kernel alone between events) of 0.8B bf16 and 9B q8_0 at 1k with
# MEMRA_GDN_MIXOUT=1 and =0: gdn_mixout against the four kernels it
# replaces. The binaries of run257. carry ["bin"]. ~2 min.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b 9b" "bf16 q8_0"
wait_synth
for mode in 1 0; do
  el "bench -profile 8, MEMRA_GDN_MIXOUT=$mode"
  d=/tmp/prof$mode; mkdir -p "$d"
  MEMRA_GDN_MIXOUT=$mode timeout 200 ./bin/main/bench -model "$M/0.8b-bf16.gguf,$M/9b-q8_0.gguf" -ctx 1024 -reps 1 -tokens 16 -profile 8 -out "$d" > "$d/out.txt" 2>"$d/stderr.txt"
  grep -E "^#|gdn|rmsnorm_gated|1024×2048|4096×4096|12352×4096|8224×1024|24576×4096|7168×1024|\| graph \|" "$d/out.txt" | head -60
done
el done
