#!/usr/bin/env bash
# PREPARED, NOT RUN: session 92's device time ran out (perf.md step 150).
# Session 92: run486 found the Q6_K kernels' trigger a trade between the
# files: at a block's last unit the 0.8B Q6_K +4.5% and the 9B Q6_K -2.8%;
# early only where the grid loops +3.3% and -2.1%. The 0.8B's Q6_K rows have
# 1,024-3,584 columns (4-14 superblocks), the 9B's 4,096 and 12,288. c
# (q6-cols.patch on 938a714): the Q6_K decode kernels trigger just after
# their wait for rows of 4,096 columns or more, else at a block's last unit.
# m and c in turn twice at 1k on the 0.8B and 9B Q6_K, tokens, one gate of
# each file, then every engine/gpu GPU test of c, so that a gain lands
# without another call (the fatbin rebuilt for every architecture and
# sassdiffed against c's measured sm_90 code). ~480 s with the start.
# carry ["bin"]; binaries: `BINS_ARCHS=90 bash scripts/gpu/bins.sh
# m=938a714:memra,bench,gate
# c=938a714+scripts/gpu/patches/launch/q6-cols.patch:memra,bench,gate,engine_gpu.test`.
set -u
source scripts/gpu/lib.sh
start_run
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)
echo "$gpu"
synth m "0.8b 9b" "q6_k"
wait_synth
bench_rotation "$M/0.8b-q6_k.gguf,$M/9b-q6_k.gguf" 1024 m c m c
el tokens
tokens_cmp m c "0.8b-q6_k 9b-q6_k"
el gates
gate c "$M/0.8b-q6_k.gguf" 64 256 0
gate c "$M/9b-q6_k.gguf" 64 128 0
gpu_tests c
el done
