#!/usr/bin/env bash
# Session 77, step 131 on any GPU (`bash scripts/gpu/run432.sh`): the batch
# products' end of a unit. perm = main + a full pass's sums kept in a lane's
# own token order, so that the reduce-scatter's levels over the token bits
# need no selects (patches/batch/1-perm.patch); bar = main + a group's warps
# meeting at their own barrier, the cross-warp sum taken by the warp that
# puts it (2-bar.patch); pb = both. pb's batch kernel, prefill and gate
# checks first, then prime ms at P = 512 (0.8B bf16, q8_0, 9B q8_0),
# BenchmarkGPUPrefillChunk replayed at n32 (0.8B bf16, q8_0) and
# BenchmarkGPUMatvecBatch's chunks of 32 tokens on the 0.8B's and 9B's
# largest shapes, of each in turn, twice (the last once more of main);
# perm's and bar's checks last, if the call has time. ~7 minutes.
# carry ["bin"]; binaries from (main at 37c6d88)
#   BINS_ARCHS=90 bash scripts/gpu/bins.sh main=main:memra,bench,gate,engine_gpu.test \
#     perm=main+scripts/gpu/patches/batch/1-perm.patch:bench,engine_gpu.test \
#     bar=main+scripts/gpu/patches/batch/2-bar.patch:bench,engine_gpu.test \
#     pb=main+scripts/gpu/patches/batch/1-perm.patch+scripts/gpu/patches/batch/2-bar.patch:bench,gate,engine_gpu.test
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name --format=csv,noheader
synth main "0.8b" "bf16 q8_0"
S0=$SYNTH
synth main "9b" "q8_0"
SYNTH="$S0 $SYNTH"
run_tests pb 'KernelMatvecBatch|PrefillMatchesTokenFeed|PrefillReplay'
wait_synth
gate pb "$M/0.8b-bf16.gguf" 300 64 0
gate pb "$M/0.8b-q8_0.gguf" 300 64 0
prime_ab "$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-q8_0.gguf" main perm bar pb main perm bar pb
for m in 0.8b-bf16 0.8b-q8_0; do
  for b in main perm bar pb main perm bar pb; do
    (cd engine/gpu && MEMRA_BENCH_MODEL="$M/$m.gguf" timeout 60 "$R/bin/$b/engine_gpu.test" -test.run '^$' \
      -test.bench 'GPUPrefillChunk/replay/n32$' -test.benchtime 20x 2>&1 | grep -E '^Bench|FAIL|panic' | sed "s/^/$m $b /")
  done
done
# What is left of the call's time (cut by failed starts) decides what else runs.
if [ $(( $(date +%s) - T0 )) -lt 360 ]; then
  mvb_bench '(BF16|Q8_0)/(7168x1024|8224x1024|1024x3584|1024x2048|24576x4096|4096x12288)/n32/' main perm bar pb main
fi
if [ $(( $(date +%s) - T0 )) -lt 470 ]; then
  for b in perm bar; do run_tests $b 'KernelMatvecBatch|PrefillMatchesTokenFeed|PrefillReplay'; done
fi
el done
