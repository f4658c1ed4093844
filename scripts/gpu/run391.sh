#!/usr/bin/env bash
# Session 72: (1) the chunk kernel tests with chunks of one token (7b54125)
# on main; (2) kq-red (scripts/gpu/patches/kq-red.patch, bin/kqr: the
# Q4_K/Q5_K batch kernels' two copies of their paths share one reduce
# array, static shared memory 8,256 -> 4,128 bytes a block) against main:
# its batch and prefill tests, BenchmarkGPUMatvecBatch Q4_K/Q5_K for 8
# tokens and prime ms at P=512 on the 9B Q4_K and Q5_K, alternated twice,
# and gates on kqr. carry ["bin"]; binaries from
#   BINS_ARCHS=90 bash scripts/gpu/bins.sh main=main:memra,gate,bench,engine_gpu.test \
#     kqr=main+scripts/gpu/patches/prefill/kq-red.patch:gate,bench,engine_gpu.test
# (the path where the patch now lies; it ran from scripts/gpu/patches/.)
# ~4 min on an H100. run390.sh (prepared in session 71) can follow on the
# same machine: its binaries are bin/main.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
synth main "9b" "q4_k q5_k"
run_tests main 'Chunk'
run_tests kqr 'TestGPUKernelMatvecBatch|TestGPUPrefillMatchesTokenFeed'
mvb_bench '(Q4_K|Q5_K)/.*/n8/' main kqr main kqr
wait_synth
prime_ab "$M/9b-q4_k.gguf,$M/9b-q5_k.gguf" main kqr main kqr
el "gates (kqr)"
gate kqr "$M/9b-q4_k.gguf" 300 32 0
gate kqr "$M/9b-q5_k.gguf" 300 32 1
el done
