#!/usr/bin/env bash
# Session 66: every engine/gpu GPU test on main after steps 117-118 (no
# synth beside it), then an experiment: every wide q8_0 batch launch laid
# out (scripts/gpu/patches/mvb/laid-wide.patch, bin/lw: the 9B's 4096 x
# 4096 out projections instead of staged, the 0.8B's 1,024-row ones
# instead of from global memory; run366's kernels: 17.2 against 19.5 us
# staged, 6.7-7.0 and 4.3 against 7.7 and 5.0 from global memory, before
# the lay's launch) against main (bin/main): prime ms at P=512 on the
# q8_0 presets, alternated twice, and a gate. carry ["bin"]; binaries from
#   bash scripts/gpu/bins.sh main=main:bench,gate,engine_gpu.test \
#     lw=main+scripts/gpu/patches/mvb/laid-wide.patch:bench,gate,memra
# ~7 min on an H100.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
gpu_tests main
synth lw "0.8b 9b" "q8_0"
wait_synth
ms="$M/0.8b-q8_0.gguf,$M/9b-q8_0.gguf"
i=0
for b in main lw main lw; do
  i=$((i+1)); d=/tmp/bp/$i-$b; rm -rf $d; mkdir -p $d
  el "bench prime P=512 ($b)"
  timeout 150 ./bin/$b/bench -model "$ms" -ctx 1024 -reps 3 -tokens 64 -prompt 512 -sampled=false -out $d > $d/stdout.txt 2> $d/stderr.txt
  echo "rc $?"
  grep -E 'prime' $d/stderr.txt
done
tar czf "$OUT/bench-prime.tgz" -C /tmp bp
el "gates"
gate main "$M/9b-q8_0.gguf" 300 32 0
gate lw "$M/9b-q8_0.gguf" 300 32 0
gate lw "$M/0.8b-q8_0.gguf" 300 128 0
el done
