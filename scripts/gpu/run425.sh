#!/usr/bin/env bash
# Session 75, step 129 on step 128: e = d + a chunk's tokens embedded in
# one launch (the prompt's ids copied to the cache once, embed's grid rows
# a token each). e's tests of what steps 128-129 touch (the embed, GDN
# chunk, prefill, profile, graph and session kernels and paths), four
# gates; BenchmarkGPUPrefillChunk replayed at n32 and prime ms at P = 512
# of main, d and e in turn, twice. Any GPU.
# carry ["bin"]; binaries from
#   BINS_ARCHS=90 bash scripts/gpu/bins.sh main=main:bench,engine_gpu.test d=0e01678:bench,engine_gpu.test \
#     e=s75:memra,gate,bench,engine_gpu.test      (s75 at 4962ee8)
# (s75 was the session's branch, deleted once it landed: its final state is
# main's f203201, whose kernels differ from 4962ee8's only in comments and a
# static_assert, the same sm_90 SASS; 0e01678 held step 128 alone, before
# step 129 and the review mends; 1259fb6 the first delta-rule form that
# step 128 describes.)
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name --format=csv,noheader
run_tests e 'KernelEmbed|KernelGDN|Prefill|Profile|GraphEqualsEager|SessionFeed|SessionEqualsEager|DecodeMatchesCPU|CacheBufs'
synth e "0.8b" "bf16 q8_0 q4_k"
S0=$SYNTH
synth e "9b" "q8_0 bf16"
SYNTH="$S0 $SYNTH"
wait_synth
el gates
gate e "$M/0.8b-bf16.gguf" 300 64 0
gate e "$M/0.8b-q4_k.gguf" 77 64 1
gate e "$M/9b-q8_0.gguf" 300 32 0
gate e "$M/9b-bf16.gguf" 77 32 1
for m in 0.8b-bf16 0.8b-q4_k; do
  for b in main d e main d e; do
    (cd engine/gpu && MEMRA_BENCH_MODEL="$M/$m.gguf" timeout 100 "$R/bin/$b/engine_gpu.test" -test.run '^$' \
      -test.bench 'GPUPrefillChunk/replay/n32$' -test.benchtime 20x 2>&1 | grep -E '^Bench|FAIL|panic' | sed "s/^/$m $b /")
  done
done
prime_ab "$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/0.8b-q4_k.gguf,$M/9b-q8_0.gguf" main d e main d e
el done
