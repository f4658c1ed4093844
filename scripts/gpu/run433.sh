#!/usr/bin/env bash
# Session 77, prepared and never run as such: run434.sh (session 78) ran it
# as it stood and is the record (the session's device time ran out): step
# 131's narrowed form on any GPU (`bash scripts/gpu/run433.sh`). In run432
# the lanes' own token order slowed the q8_0 laid kernels (the 9B's 4096 x
# 12288 down projection +5-6%) and the q8_0 kernels reading x from global
# memory (0-3%). narrow = main (step 131) + that order only in the 16-bit
# stream's 8-row kernels and the q8_0 rings over staged copies
# (patches/batch/narrow.patch). narrow's batch kernel and prefill tests and
# two gates, then prime ms at P = 512 (0.8B bf16, q8_0, 9B q8_0),
# BenchmarkGPUPrefillChunk replayed at n32 and the q8_0 batch kernels at n32
# of pre131 (37c6d88, before step 131), main and narrow in turn, twice.
# ~3 minutes. Prediction: 9B q8_0 priming back to pre131's or better (its
# laid launches ~10 us each faster, 32 a chunk: ~1.5%), the 0.8B's as main's.
# carry ["bin"]; binaries from
#   BINS_ARCHS=90 bash scripts/gpu/bins.sh main=main:memra,bench,gate,engine_gpu.test \
#     pre131=37c6d88:bench,engine_gpu.test \
#     narrow=main+scripts/gpu/patches/batch/narrow.patch:bench,gate,engine_gpu.test
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name --format=csv,noheader
synth main "0.8b" "bf16 q8_0"
S0=$SYNTH
synth main "9b" "q8_0"
SYNTH="$S0 $SYNTH"
run_tests narrow 'KernelMatvecBatch|PrefillMatchesTokenFeed|PrefillReplay'
wait_synth
gate narrow "$M/0.8b-q8_0.gguf" 300 64 0
gate narrow "$M/9b-q8_0.gguf" 300 64 0
prime_ab "$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-q8_0.gguf" pre131 main narrow pre131 main narrow
for m in 0.8b-bf16 0.8b-q8_0; do chunk_ab "$M/$m.gguf" pre131 main narrow pre131 main narrow; done
mvb_bench 'Q8_0/(7168x1024|1024x3584|24576x4096|4096x12288|4096x4096)/n32/' pre131 main narrow
el done
