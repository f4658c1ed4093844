#!/usr/bin/env bash
# Session 64, step 114 again: the chain's Q4_K and Q5_K nodes for old
# (c2c67f1), new (2c49908: codes as f16 subnormals) and b1 (new with
# matvec_q4_k bounded to a minimum of one block an SM: 78 registers, where
# new's 59 made the plain kernel's 24576 x 4096 node 3.8% slower in
# run358), two rounds; then the matvec tests' Q4_K and Q5_K cases of
# 4096 x 4096 and 1003 x 1024 on old and new (their max relative errors
# against float64, same seeds). carry ["bin"], binaries from
# `bash scripts/gpu/bins.sh new=HEAD+scripts/gpu/patches/k4bits.patch:engine_gpu.test
#  old=c2c67f1+scripts/gpu/patches/k4bits.patch:engine_gpu.test
#  b1=HEAD+scripts/gpu/patches/k4bits.patch+scripts/gpu/patches/q4k-bound1.patch:engine_gpu.test`.
# (HEAD was 2c49908; q4k-bound1.patch, deleted with step 114's revert, was
# the one line __launch_bounds__(MEMRA_MV_THREADS) -> (MEMRA_MV_THREADS, 1)
# on matvec_q4_k.)
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name --format=csv,noheader
for r in 1 2; do for b in old new b1; do chain "$b" '(Q4_K|Q5_K)/.*/.*/graph' | grep -o "^[a-z0-9]* Bench[^ ]*\|[0-9.]* µs/node" | paste - -; done; done
for b in old new; do
  el "matvec test errors ($b)"
  (cd engine/gpu && timeout 45 "$R/bin/$b/engine_gpu.test" -test.run 'KernelMatvec/Q[45]_K-.*-(4096x4096|1003x1024)-' -test.v 2>&1 | grep -E "max\|gpu|^--- |^ok|FAIL" > "$OUT/err-$b.txt")
  tail -2 "$OUT/err-$b.txt"
done
el done
