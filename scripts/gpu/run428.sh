#!/usr/bin/env bash
# Session 75, step 130, PREPARED, NOT RUN (the session's device time ran
# out): f = main + gdn_delta_chunk staging a round's v at the block's rows
# in shared memory with its preparations (the state chain reads v from the
# L2 a token ahead: scripts/gpu/patches/delta-v-staged.patch). f's chunk
# kernel and prefill tests, a gate, BenchmarkGPUPrefillChunk replayed at
# n32 and prime ms at P = 512 of main and f in turn, twice. Any GPU, ~2
# minutes.
# carry ["bin"]; binaries from
#   BINS_ARCHS=90 bash scripts/gpu/bins.sh main=main:bench,engine_gpu.test \
#     f=main+scripts/gpu/patches/delta-v-staged.patch:gate,bench,engine_gpu.test
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name --format=csv,noheader
run_tests f 'KernelGDN|PrefillMatchesTokenFeed|PrefillReplay'
synth f "0.8b" "bf16 q8_0"
S0=$SYNTH
synth f "9b" "q8_0"
SYNTH="$S0 $SYNTH"
wait_synth
gate f "$M/0.8b-bf16.gguf" 300 64 0
for m in 0.8b-bf16 9b-q8_0; do
  for b in main f main f; do
    (cd engine/gpu && MEMRA_BENCH_MODEL="$M/$m.gguf" timeout 60 "$R/bin/$b/engine_gpu.test" -test.run '^$' \
      -test.bench 'GPUPrefillChunk/replay/n32$' -test.benchtime 20x 2>&1 | grep -E '^Bench|FAIL|panic' | sed "s/^/$m $b /")
  done
done
prime_ab "$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf" main f main f
el done
