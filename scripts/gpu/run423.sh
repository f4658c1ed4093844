#!/usr/bin/env bash
# Session 75, step 128 in two parts: c = main + the conv chunk over runs
# of tokens (scripts/gpu/patches/prefill/conv-chunk-runs.patch), d = c + the delta
# chunk preparing 16 tokens' q, k and gate in shared memory before their
# state chain (s75 at 0e01678). d's chunk kernel tests, prefill and graph
# tests and two gates; BenchmarkGPUPrefillChunk replayed at n32 and prime
# ms at P = 512 of main, c and d in turn, twice; d's chunk of 32 kernel by
# kernel. Any GPU.
# carry ["bin"]; binaries from
#   BINS_ARCHS=90 bash scripts/gpu/bins.sh main=main:bench,engine_gpu.test \
#     c=main+scripts/gpu/patches/prefill/conv-chunk-runs.patch:bench,engine_gpu.test d=s75:memra,gate,bench,engine_gpu.test
# (s75 was the session's branch, deleted once it landed: its final state is
# main's f203201, whose kernels differ from 4962ee8's only in comments and a
# static_assert, the same sm_90 SASS; 0e01678 held step 128 alone, before
# step 129 and the review mends; 1259fb6 the first delta-rule form that
# step 128 describes.)
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name --format=csv,noheader
run_tests d 'KernelGDN|PrefillMatchesTokenFeed|PrefillReplay|GraphEqualsEager|SessionFeed'
synth d "0.8b" "bf16 q8_0 q4_k"
S0=$SYNTH
synth d "9b" "q8_0"
SYNTH="$S0 $SYNTH"
wait_synth
el gates
gate d "$M/0.8b-bf16.gguf" 300 64 0
gate d "$M/9b-q8_0.gguf" 300 32 0
for m in 0.8b-bf16 9b-q8_0; do
  for b in main c d main c d; do
    (cd engine/gpu && MEMRA_BENCH_MODEL="$M/$m.gguf" timeout 100 "$R/bin/$b/engine_gpu.test" -test.run '^$' \
      -test.bench 'GPUPrefillChunk/replay/n32$' -test.benchtime 20x 2>&1 | grep -E '^Bench|FAIL|panic' | sed "s/^/$m $b /")
  done
done
prime_ab "$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/0.8b-q4_k.gguf,$M/9b-q8_0.gguf" main c d main c d
el "bench -profile 4 at P = 512 (d)"
mkdir -p /tmp/prof
timeout 200 ./bin/d/bench -model "$M/0.8b-bf16.gguf,$M/9b-q8_0.gguf" -ctx 1024 -reps 3 -tokens 64 -prompt 512 -profile 4 -sampled=false -out /tmp/prof > "$OUT/prof.md" 2> /tmp/prof/stderr.txt
echo "rc $?"
grep -E 'gdn_|per prefill chunk' "$OUT/prof.md"
el done
