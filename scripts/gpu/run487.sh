#!/usr/bin/env bash
# PREPARED, NOT RUN: session 92's device time ran out (perf.md steps 150-151).
# Session 92: run486 found the Q6_K kernels' trigger a trade between the
# files: at a block's last unit the 0.8B Q6_K +4.5% and the 9B Q6_K -2.8%;
# early only where the grid loops +3.3% and -2.1%. The 0.8B's Q6_K rows have
# 1,024-3,584 columns (4-14 superblocks), the 9B's 4,096 and 12,288. And
# run484's rotation primed the 9B K-quants 2.5-5.4% more slowly after step
# 148, whose early trigger reached the prefill's ring kernels too
# (matvec_batch_kq.cu). d (ring-trigger.patch on 938a714): the Q6_K decode
# kernels trigger just after their wait for rows of 4,096 columns or more,
# else at a block's last unit; the prefill's ring kernels at the last unit
# again. m and d in turn twice at 1k on the 0.8B and 9B Q6_K and the 9B
# Q4_K and Q5_K (decode kernels unchanged: controls; priming: the prefill
# part), each pass's priming medians compared, tokens, gates. Then
# `run487.sh tests`, typed at once on the warm machine: every engine/gpu GPU
# test of d, so that a gain lands without another call (the fatbin rebuilt
# for every architecture and sassdiffed against d's measured sm_90 code).
# ~200 s and ~350 s. carry ["bin"]; binaries: `BINS_ARCHS=90 bash
# scripts/gpu/bins.sh m=938a714:memra,bench,gate
# d=938a714+scripts/gpu/patches/launch/ring-trigger.patch:memra,bench,gate,engine_gpu.test`.
set -u
source scripts/gpu/lib.sh
start_run
if [ "${1:-}" = tests ]; then
  gpu_tests d
  el done
  exit 0
fi
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)
echo "$gpu"
synth m "0.8b 9b" "q6_k"
first=$SYNTH
synth m "9b" "q4_k q5_k"
SYNTH="$first $SYNTH"
wait_synth
bench_rotation "$M/0.8b-q6_k.gguf,$M/9b-q6_k.gguf,$M/9b-q4_k.gguf,$M/9b-q5_k.gguf" 1024 m d m d
el priming
ms=($(ls -dtr /tmp/bn/m-* | tail -2)) ds=($(ls -dtr /tmp/bn/d-* | tail -2))
for i in 0 1; do
  ./bin/m/bench -compare "${ms[$i]}/latest.json" "${ds[$i]}/latest.json" 2>&1 | grep -A8 '^| model | kv | P old'
done
el tokens
tokens_cmp m d "0.8b-q6_k 9b-q6_k 9b-q4_k"
el gates
gate d "$M/0.8b-q6_k.gguf" 64 256 0
gate d "$M/9b-q6_k.gguf" 64 128 0
gate d "$M/9b-q4_k.gguf" 64 128 0
el done
