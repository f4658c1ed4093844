#!/usr/bin/env bash
# Session 65. run361's ncu of main's 4,096-row K-quant nodes: in Q4_K 4096 x
# 4096 (wide, 4 slots) 42% of the stall samples wait on x's first load after
# the wait, which queues behind the whole block's weight copies issued
# before it; in the 2-slot kernels (Q4_K wave, Q6_K wide, 4096 x 12288)
# 27-37% wait on the ring's one tile in flight (cp.async.wait_group 0).
# The ring's knobs (kernels/mvring.cuh; main keeps both at 0, the SASS
# unchanged): MEMRA_RING_PD asks the L2 for PD more items ahead of the
# ring's copies, MEMRA_RING_LATE sends the weights before the wait to the
# L2 only and copies them into the ring once x is staged. Variants (patches
# under scripts/gpu/patches/ring/, each one define): pf2 = PD 2; late =
# LATE; late2 = PD 2 and LATE. Same sums by construction (loads move, the
# arithmetic does not): the k4bits digests of late2 against main's. Then
# the chain's K-quant nodes (all variants, round 1: Q4_K, Q5_K, Q6_K at the
# three 9B shapes; round 2: Q4_K and Q6_K), a gate on late2, and graph
# decode at 1k of 9B Q4_K, 9B Q4_K_M and 0.8B Q4_K_M, every variant against
# main, two rounds. carry ["bin"], binaries (main was 68a1276) from `bash scripts/gpu/bins.sh
#  main=main+scripts/gpu/patches/k4bits.patch:bench,engine_gpu.test
#  pf2=main+scripts/gpu/patches/ring/pf2.patch:bench,engine_gpu.test
#  late=main+scripts/gpu/patches/ring/late.patch:bench,engine_gpu.test
#  late2=main+scripts/gpu/patches/k4bits.patch+scripts/gpu/patches/ring/late2.patch:memra,gate,bench,engine_gpu.test`. ~8 min.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
synth late2 "9b" "q4_k q4_k_m"
s1=$SYNTH
k4bits main late2
for b in main pf2 late late2; do chain "$b" '(Q4_K|Q5_K|Q6_K)/.*/.*/graph' | grep -o "^[a-z0-9]* Bench[^ ]*\|[0-9.]* µs/node" | paste - -; done
for b in main pf2 late late2; do chain "$b" '(Q4_K|Q6_K)/.*/.*/graph' | grep -o "^[a-z0-9]* Bench[^ ]*\|[0-9.]* µs/node" | paste - -; done
SYNTH=$s1; wait_synth
synth late2 "0.8b" "q4_k_m"; wait_synth
el "gate (late2)"
gate late2 "$M/9b-q4_k_m.gguf" 300 64 0
AB_CTX=1024 ab_graph "$M/9b-q4_k.gguf,$M/9b-q4_k_m.gguf,$M/0.8b-q4_k_m.gguf" 2 main pf2 late late2
el done
