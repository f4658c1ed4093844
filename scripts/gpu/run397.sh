#!/usr/bin/env bash
# Session 72: the kernel tables indexed once (8bda91c, bin/main) against
# 7dda177 (bin/old): BenchmarkGPUPrefillHost old and new; the prefill tests
# and a gate on new (it did not run: the binaries below hold no gate, and
# the gate line came out empty; run398 ran the gates); bench at 1k with priming at P=512 on the 0.8B bf16,
# q8_0 and Q4_K and the 9B q8_0, old and new alternated twice (graph rows
# unchanged, eager rows and prime ms the host's). carry ["bin"]; binaries from
#   bash scripts/gpu/bins.sh main=main:memra,bench,engine_gpu.test old=7dda177:bench,engine_gpu.test
# ~4 min on an H100.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
synth main "0.8b" "bf16 q8_0 q4_k"
synth9=""; for t in q8_0; do "./bin/main/memra" synth --arch qwen35 --preset 9b --type $t -o "$M/9b-$t.gguf" > "$M/9b-$t.log" 2>&1 & synth9="$synth9 $!"; done
for b in old main; do
  el "BenchmarkGPUPrefillHost ($b)"
  (cd engine/gpu && timeout 100 "$R/bin/$b/engine_gpu.test" -test.run '^$' -test.bench 'GPUPrefillHost' -test.benchtime 40x 2>&1 | grep -E '^Bench' | sed "s/^/$b /")
done
run_tests main 'TestGPUPrefillMatchesTokenFeed|TestGPUProfilePrefill|TestGPUGraphEqualsEager|TestGPUDecodeMatchesCPU'
wait_synth; wait $synth9
for b in old main old main; do
  el "bench 1k, prime 512 ($b)"
  timeout 150 ./bin/$b/bench -model "$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/0.8b-q4_k.gguf,$M/9b-q8_0.gguf" -ctx 1024 -reps 3 -tokens 64 -prompt 512 -sampled=false -out /tmp/b-$b > /tmp/b-$b.txt 2>&1
  grep -E 'prime|ctx +1024 (graph|eager)' /tmp/b-$b.txt | sed -E "s/^/$b /; s/ +\(.*captures.*//"
done
el "gate (main)"
gate main "$M/0.8b-q4_k.gguf" 300 64 0
el done
