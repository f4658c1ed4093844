#!/usr/bin/env bash
# Session 76 (prepared in session 75, which ran out of device time; this
# form first ran in session 76). On an H200: docs/perf.md's current table
# (lib.sh full_table, main; compared with run410's JSON), which steps
# 127-129 have not had on one. On any GPU then step 130: f = main +
# gdn_delta_chunk staging a round's v at the block's rows in shared memory
# with its preparations (the state chain reads v from the L2 a token ahead:
# scripts/gpu/patches/delta-v-staged.patch). f's chunk kernel and prefill
# tests, a gate, BenchmarkGPUPrefillChunk replayed at n32 and prime ms at
# P = 512 of main and f in turn, twice. ~2 minutes for step 130, ~5 more
# for the table; then, where time is left, ncu of the 0.8B's two largest
# batch shapes.
# carry ["bin"]; binaries from
#   BINS_ARCHS=90 bash scripts/gpu/bins.sh main=main:memra,bench,gate,engine_gpu.test \
#     f=main+scripts/gpu/patches/delta-v-staged.patch:gate,bench,engine_gpu.test pre127=16afdf8:bench
set -u
source scripts/gpu/lib.sh
start_run
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader)
echo "$gpu"
case $gpu in
*H200*)
  synth main "0.8b 9b" "bf16 q8_0 q4_k q5_k q6_k"
  wait_synth
  full_table main
  el compare
  ./bin/main/bench -compare docs/results/h200-run410.json "$(ls -t /tmp/table/bench-*.json | head -1)" 2>&1 | tail -70
  ;;
*)
  synth main "0.8b" "bf16 q8_0"
  S0=$SYNTH
  synth main "9b" "q8_0"
  SYNTH="$S0 $SYNTH"
  wait_synth
  ;;
esac
# The table took ~290 s with its models (run410); step 130 wants ~150 more.
if [ $(( $(date +%s) - T0 )) -gt 420 ]; then el "no time left for step 130 in this call"; exit 0; fi
run_tests f 'KernelGDN|PrefillMatchesTokenFeed|PrefillReplay'
gate f "$M/0.8b-bf16.gguf" 300 64 0
for m in 0.8b-bf16 9b-q8_0; do
  for b in main f main f; do
    (cd engine/gpu && MEMRA_BENCH_MODEL="$M/$m.gguf" timeout 60 "$R/bin/$b/engine_gpu.test" -test.run '^$' \
      -test.bench 'GPUPrefillChunk/replay/n32$' -test.benchtime 20x 2>&1 | grep -E '^Bench|FAIL|panic' | sed "s/^/$m $b /")
  done
done
prime_ab "$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf" main f main f
# What bounds the 0.8B's batch products, most of its chunk (run423): ncu of
# one pass of 8 tokens on its two largest shapes, plain and wide.
if [ $(( $(date +%s) - T0 )) -lt 480 ]; then
  ncu_batch main BF16/7168x1024/n8/global matvec_batch_bf16 bf7168
  ncu_batch main BF16/1024x3584/n8/global matvec_batch_bf16_wide bf1024w
  tar czf "$OUT/ncu.tgz" -C /tmp/ncu --exclude='*.ncu-rep' .
fi
el done
