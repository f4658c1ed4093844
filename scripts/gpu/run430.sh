#!/usr/bin/env bash
# Session 76, step 130 on any GPU (ran alone, `bash scripts/gpu/run430.sh`,
# on an H100 asked for as nvidia-h200). f = main + gdn_delta_chunk staging a
# round's v at the block's rows in shared memory with its preparations
# (delta-v-staged.patch, prepared in session 75); g = f
# + the state chain's one warp sum a token, each token's output sums taken
# with the next token's k-products (delta-vo-defer.patch). f's and g's chunk
# kernel and prefill tests, a gate each, BenchmarkGPUPrefillChunk replayed
# at n32 (0.8B bf16) and prime ms at P = 512 (0.8B bf16, q8_0) of main, f
# and g in turn, twice; then, where the call has time left, ncu of the
# 0.8B's two largest batch shapes (what bounds the batch products, most of
# its chunk: run423). ~3 minutes. (Cut to the 0.8B before it ran, with
# the session's device time short after failed starts.)
# carry ["bin"]; binaries from (main at e7bf939)
#   BINS_ARCHS=90 bash scripts/gpu/bins.sh main=main:memra,bench,gate,engine_gpu.test \
#     f=main+scripts/gpu/patches/delta-v-staged.patch:gate,bench,engine_gpu.test \
#     g=main+scripts/gpu/patches/delta-v-staged.patch+scripts/gpu/patches/delta-vo-defer.patch:gate,bench,engine_gpu.test \
#     pre127=16afdf8:bench
# (both patches are in scripts/gpu/patches/prefill/ since g landed).
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b" "bf16 q8_0"
wait_synth
for b in f g; do run_tests $b 'KernelGDN|PrefillMatchesTokenFeed|PrefillReplay'; done
for b in f g; do gate $b "$M/0.8b-bf16.gguf" 300 64 0; done
for m in 0.8b-bf16; do
  for b in main f g main f g; do
    (cd engine/gpu && MEMRA_BENCH_MODEL="$M/$m.gguf" timeout 60 "$R/bin/$b/engine_gpu.test" -test.run '^$' \
      -test.bench 'GPUPrefillChunk/replay/n32$' -test.benchtime 20x 2>&1 | grep -E '^Bench|FAIL|panic' | sed "s/^/$m $b /")
  done
done
prime_ab "$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf" main f g main f g
# The call's first script (run428) started at T_START, if it was given.
if [ $(( $(date +%s) - ${T_START:-$T0} )) -lt 200 ]; then
  ncu_batch main BF16/7168x1024/n8/global matvec_batch_bf16 bf7168
  ncu_batch main BF16/1024x3584/n8/global matvec_batch_bf16_wide bf1024w
  tar czf "$OUT/ncu.tgz" -C /tmp/ncu --exclude='*.ncu-rep' .
fi
el done
