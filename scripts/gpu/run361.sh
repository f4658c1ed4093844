#!/usr/bin/env bash
# Session 65. run360 measured q4k-min1 (all three Q4_K kernels held to a
# minimum of one block an SM): same sums, 9B Q4_K +0.7% and Q4_K_M +0.6%,
# but 0.8B Q4_K_M -1.3% in both rounds at 1k; the chain's gain was the plain
# kernel's 24576 x 4096 node alone. This call: the plain kernel alone bound
# (scripts/gpu/patches/q4k-plain1.patch), its digests (must be equal), the
# chain's Q4_K nodes three rounds, and graph decode A/B on the 0.8B and 9B
# Q4_K and Q4_K_M; then ncu with the stall samples by SASS line on main's
# 4,096-row K-quant nodes (Q4_K 4096 x 4096 wide at 29% of copy in run356's
# profile, Q4_K 4096 x 12288 wave at 51%, Q6_K 4096 x 12288 wide at 60%).
# carry ["bin"], binaries from `bash scripts/gpu/bins.sh
#  new=main+scripts/gpu/patches/k4bits.patch+scripts/gpu/patches/q4k-plain1.patch:memra,gate,bench,engine_gpu.test
#  old=main+scripts/gpu/patches/k4bits.patch:bench,engine_gpu.test`. ~6 min.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
synth new "0.8b 9b" "q4_k q4_k_m"
k4bits old new
for r in 1 2 3; do for b in old new; do chain "$b" 'Q4_K/.*/.*/graph' | grep -o "^[a-z0-9]* Bench[^ ]*\|[0-9.]* µs/node" | paste - -; done; done
wait_synth
el "gates (new)"
gate new "$M/9b-q4_k.gguf" 300 64 0
gate new "$M/0.8b-q4_k_m.gguf" 300 128 1
ab_graph "$M/0.8b-q4_k.gguf,$M/0.8b-q4_k_m.gguf,$M/9b-q4_k.gguf,$M/9b-q4_k_m.gguf" 2 old new
ncu_src old Q4_K/4096x4096/xnorm=false q4k-4096
ncu_src old Q4_K/4096x12288/xnorm=false q4k-12288
ncu_src old Q6_K/4096x12288/xnorm=false q6k-12288
tar czf "$OUT/ncu.tgz" -C /tmp ncu
el done
