#!/usr/bin/env bash
# Prepared in session 67 (no GPU was lent after run371), for a session with
# one: the q8_0 ring kernels' scales a trip at a time
# (scripts/gpu/patches/q8-cs.patch, bin/cs) against main: the batch and
# prefill tests on cs, BenchmarkGPUMatvecBatch q8_0 for 8 tokens and prime
# ms at P=512 on the 0.8B and 9B q8_0, alternated twice, and gates on cs.
# carry ["bin"]; binaries from
#   BINS_ARCHS=90 bash scripts/gpu/bins.sh main=main:memra,bench,engine_gpu.test \
#     cs=main+scripts/gpu/patches/q8-cs.patch:gate,bench,engine_gpu.test
# ~4 min on an H100.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
synth main "0.8b 9b" "q8_0"
run_tests cs 'TestGPUKernelMatvecBatch|TestGPUPrefillMatchesTokenFeed'
mvb_bench 'Q8_0/.*/n8/' main cs main cs
wait_synth
prime_ab "$M/0.8b-q8_0.gguf,$M/9b-q8_0.gguf" main cs main cs
el "gates (cs)"
gate cs "$M/9b-q8_0.gguf" 300 32 0
gate cs "$M/0.8b-q8_0.gguf" 300 128 1
el done
