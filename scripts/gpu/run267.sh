#!/usr/bin/env bash
# Session 39, step 95's review: the 0.8B and 2B attention q|k|v products are
# fused into one matrix of 4096 + 512 + 512 = 5,120 rows (5120 x 1024 and
# 5120 x 2048), so the 5,120-row bound moved them to the wide q8_0 kernel
# too, unmeasured. Branch next/wide-5120's binaries (environment bounds):
# bench graph at 1k on 0.8B and 2B q8_0 with main's old bound
# (MEMRA_Q8_WIDE=4096) and the new one (5120, wave to 4096), alternating;
# the gate with the new one. carry ["bin"] (bin/main = the branch). ~2.5 min.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b 2b" "q8_0"
wait_synth
mkdir -p /tmp/bn
for r in 1 2; do
  for w in 4096 5120; do
    el "bench MEMRA_Q8_WIDE=$w"
    d=/tmp/bn/w$w-$(date +%s%N); mkdir -p "$d"
    MEMRA_Q8_WIDE=$w MEMRA_Q8_WAVE=4096 timeout 60 ./bin/main/bench -model "$M/0.8b-q8_0.gguf,$M/2b-q8_0.gguf" -ctx 1024 -reps 3 -tokens 64 -out "$d" 2>"$d/stderr.txt" | grep -E '\| graph \|' | cut -d'|' -f2,4,5,6,9,13
  done
done
export MEMRA_Q8_WIDE=5120 MEMRA_Q8_WAVE=4096
gate main "$M/0.8b-q8_0.gguf" 64 128 0
el done
