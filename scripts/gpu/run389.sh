#!/usr/bin/env bash
# Session 71: q8-cs2 (scripts/gpu/patches/q8-cs2.patch, bin/cs2: q8-cs with
# its scales' form a runtime argument, one copy of the ring loop) against
# main 2dad9e6, as run374 measured q8-cs: the batch and prefill tests on
# cs2, BenchmarkGPUMatvecBatch q8_0 for 8 tokens and prime ms at P=512 on
# the 0.8B and 9B q8_0, alternated twice, and gates on cs2. carry ["bin"];
# binaries from
#   BINS_ARCHS=90 bash scripts/gpu/bins.sh main=main:memra,gate,bench,engine_gpu.test \
#     cs2=main+scripts/gpu/patches/prefill/q8-cs2.patch:gate,bench,engine_gpu.test
# (the path where the patch now lies; it ran from scripts/gpu/patches/.)
# ~2.5 min on an H100.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
synth main "0.8b 9b" "q8_0"
run_tests cs2 'TestGPUKernelMatvecBatch|TestGPUPrefillMatchesTokenFeed'
mvb_bench 'Q8_0/.*/n8/' main cs2 main cs2
wait_synth
prime_ab "$M/0.8b-q8_0.gguf,$M/9b-q8_0.gguf" main cs2 main cs2
el "gates (cs2)"
gate cs2 "$M/9b-q8_0.gguf" 300 32 0
gate cs2 "$M/0.8b-q8_0.gguf" 300 128 1
el done
