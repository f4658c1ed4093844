#!/usr/bin/env bash
# Session 75: why run423's 0.8B Q4_K primed 1.5-2% slower with step 128's
# chunk kernels (c, d) when the bf16 and q8_0 presets primed 4-8% faster:
# BenchmarkGPUPrefillChunk replayed at n32 on the 0.8B Q4_K for main, c
# and d in turn, twice, and main's and d's chunk of 32 kernel by kernel.
# The binaries of run423 (carry ["bin"]).
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name --format=csv,noheader
synth d "0.8b" "q4_k"
wait_synth
for b in main c d main c d; do
  (cd engine/gpu && MEMRA_BENCH_MODEL="$M/0.8b-q4_k.gguf" timeout 100 "$R/bin/$b/engine_gpu.test" -test.run '^$' \
    -test.bench 'GPUPrefillChunk/(replay|eager)/n32$' -test.benchtime 20x 2>&1 | grep -E '^Bench|FAIL|panic' | sed "s/^/0.8b-q4_k $b /")
done
mkdir -p /tmp/prof
for b in main d; do
  el "bench -profile 4 at P = 512 ($b)"
  timeout 100 ./bin/$b/bench -model "$M/0.8b-q4_k.gguf" -ctx 1024 -reps 3 -tokens 64 -prompt 512 -profile 4 -sampled=false -out /tmp/prof > "$OUT/prof-$b.md" 2> /tmp/prof/stderr.txt
  echo "rc $?"
  grep prime /tmp/prof/stderr.txt
  awk '/per prefill chunk/{p=1; n=0} p&&/^(\||##)/{print; if (++n>20) p=0}' "$OUT/prof-$b.md"
done
el done
