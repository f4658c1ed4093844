#!/usr/bin/env bash
# Prepared in session 64 (no device time left to run it): the Q4_K
# kernels held to a minimum of one block an SM (scripts/gpu/patches/
# q4k-min1.patch: plain 80 registers against 65, wide 80 and wave 71
# against 64, the item loops 290/291/289 -> 288/288/289 at sm_90; blocks
# an SM unchanged), which took step 114's form of the plain kernel 5.6%
# faster on 24576 x 4096. The chain times each kernel on its own shape. Digests (k4bits: the same sums, so they must be equal), the chain's
# Q4_K nodes three rounds, the K-quant GPU tests and gates on the patched
# build, then graph decode at 64 and 1k of the 0.8B and 9B Q4_K and Q4_K_M,
# old and new alternating, two rounds, bench -compare. carry ["bin"],
# binaries from `bash scripts/gpu/bins.sh
#  new=main+scripts/gpu/patches/k4bits.patch+scripts/gpu/patches/q4k-min1.patch:memra,gate,bench,engine_gpu.test
#  old=main+scripts/gpu/patches/k4bits.patch:bench,engine_gpu.test`. ~7 min.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
synth new "0.8b 9b" "q4_k q4_k_m"
k4bits old new
for r in 1 2 3; do for b in old new; do chain "$b" 'Q4_K/.*/.*/graph' | grep -o "^[a-z0-9]* Bench[^ ]*\|[0-9.]* µs/node" | paste - -; done; done
kq_tests new Q4_K
wait_synth
el "gates (new)"
gate new "$M/9b-q4_k.gguf" 300 64 0
gate new "$M/0.8b-q4_k_m.gguf" 300 128 1
ab_graph "$M/0.8b-q4_k.gguf,$M/0.8b-q4_k_m.gguf,$M/9b-q4_k.gguf,$M/9b-q4_k_m.gguf" 2 old new
el done
