#!/usr/bin/env bash
# Session 49, main after the bench's row arithmetic moved into newRow and
# copyBW (tests only could reach it there): bench on the 0.8B bf16 and q8_0
# presets at 1k, compared with run303's rows. carry ["bin"]. ~2 min.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b" "bf16 q8_0"
wait_synth
el "bench 1k"
./bin/main/bench -model "$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf" -ctx 1024 -reps 3 -tokens 64 -out "$OUT/results" 2>&1 | grep -E 'copy|graph|eager|roofline' | head -20
el "compare with run303"
./bin/main/bench -compare docs/results/h200-run303.json "$OUT"/results/*.json 2>&1 | head -20
el done
