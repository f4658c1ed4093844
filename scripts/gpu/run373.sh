#!/usr/bin/env bash
# Prepared in session 67 (no GPU was lent after run371), for a session with
# one: two prefill patches against main, each alternated twice with it:
#   kqf:  scripts/gpu/patches/kq-full.patch, step 119's copy for a full chunk
#         in the Q4_K and Q5_K tensor-core batch kernels;
#   gdnp: scripts/gpu/patches/gdn-pipe.patch, gdn_conv_chunk and
#         gdn_delta_chunk loading token t + 1's inputs before token t's
#         arithmetic (the 0.8B's chunk is spent mostly outside its products).
# Their tests first (kqf: the batch test and the prefill test; gdnp: the
# chunk kernels' tests and the prefill test), then BenchmarkGPUMatvecBatch
# Q4_K/Q5_K for 8 tokens (main, kqf), prime ms at P=512 (main, kqf, gdnp) on
# the 0.8B and 9B Q4_K, Q5_K and Q4_K_M presets and the 0.8B bf16 and q8_0,
# and gates. carry ["bin"]; binaries from
#   BINS_ARCHS=90 bash scripts/gpu/bins.sh main=main:memra,bench,engine_gpu.test \
#     kqf=main+scripts/gpu/patches/kq-full.patch:gate,bench,engine_gpu.test \
#     gdnp=main+scripts/gpu/patches/gdn-pipe.patch:gate,bench,engine_gpu.test
# ~8 min on an H100.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
synth main "0.8b 9b" "q4_k q5_k q4_k_m"
synth_k=$SYNTH
synth main "0.8b" "bf16 q8_0"
SYNTH="$SYNTH $synth_k"
run_tests kqf 'TestGPUKernelMatvecBatch|TestGPUPrefillMatchesTokenFeed'
run_tests gdnp 'Chunk|TestGPUPrefillMatchesTokenFeed'
mvb_bench '(Q4_K|Q5_K)/.*/n8/' main kqf main kqf
wait_synth
prime_ab "$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/0.8b-q4_k.gguf,$M/0.8b-q5_k.gguf,$M/0.8b-q4_k_m.gguf,$M/9b-q4_k.gguf,$M/9b-q5_k.gguf,$M/9b-q4_k_m.gguf" \
  main kqf gdnp main kqf gdnp
el "gates"
gate kqf "$M/9b-q4_k.gguf" 300 32 0
gate kqf "$M/9b-q5_k.gguf" 300 32 0
gate kqf "$M/0.8b-q4_k_m.gguf" 300 128 1
gate gdnp "$M/0.8b-bf16.gguf" 300 128 0
gate gdnp "$M/9b-q4_k_m.gguf" 300 32 0
el done
