#!/usr/bin/env bash
# Prepared in session 90, whose five calls for it got no machine; ran in
# session 91 (`bash scripts/gpu/run483.sh`, asked for as nvidia-h100-x1, on
# an H100; log docs/results/h100-run483-log.txt, perf.md step 148): step
# 147's second form (scripts/gpu/patches/launch/trigger16.patch): the
# 16-bit matvecs and the K-quants' ring trigger their dependents just after
# their wait, the q8_0 kernels keep the trigger at a block's last unit
# (run482: the first form, every matvec early, lost 2.5-2.8% on q8_0);
# and its third (trigger-loop.patch, t3): the same, but the q8_0 kernels
# trigger after their wait where their grid loops (units > gridDim.x) and
# at the last unit where it does not (the 0.8B's q8_0 grids, under the
# resident blocks).
# carry ["bin"]; binaries: `BINS_ARCHS=90 bash scripts/gpu/bins.sh
# m=d7a5248:memra,bench t2=d7a5248+scripts/gpu/patches/launch/trigger16.patch:memra,bench,gate,engine_gpu.test
# t3=d7a5248+scripts/gpu/patches/launch/trigger-loop.patch:memra,bench,gate`.
# m, t2 and t3 in turn twice (graph rows of the 0.8B bf16, q8_0 and Q4_K and
# the 9B q8_0 at 1k), greedy tokens of m and t2 compared (of t3 on the
# q8_0 models), three gates of t2 and the 9B q8_0's of t3, and t2's GPU
# tests of the mixed launch and the early loads, which run482's ran out of
# time before, and of the omitted parts: t2's 16-bit and K-quant kernels are
# run482's t's instruction for instruction, its q8_0 kernels main's
# (cuobjdump of both cubins, sm_90), and run482 ran t's matvec, decode and
# graph tests.
set -u
source scripts/gpu/lib.sh
start_run
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)
echo "$gpu"
synth m "0.8b" "bf16 q8_0 q4_k"
first=$SYNTH
synth m "9b" "q8_0"
SYNTH="$first $SYNTH"
wait_synth
bench_rotation "$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/0.8b-q4_k.gguf,$M/9b-q8_0.gguf" 1024 m t2 t3 m t2 t3
el tokens
tokens_cmp m t2 "0.8b-bf16 0.8b-q8_0 0.8b-q4_k 9b-q8_0"
mv "$OUT/tokens.tgz" "$OUT/tokens-t2.tgz"
tokens_cmp m t3 "0.8b-q8_0 9b-q8_0"
el gates
gate t2 "$M/0.8b-bf16.gguf" 64 256 0
gate t2 "$M/0.8b-q4_k.gguf" 64 256 0
gate t2 "$M/9b-q8_0.gguf" 64 128 0
gate t3 "$M/9b-q8_0.gguf" 64 128 0
el "mixed-launch, early-load and omit GPU tests (t2)"
(cd engine/gpu && timeout 100 "$R/bin/t2/engine_gpu.test" -test.run 'KernelMatvecMix|EarlyLoads|OmitParts' -test.v -test.timeout 90s > "$OUT/gputest.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|panic" "$OUT/gputest.txt" | grep -v "^    " | head -30
el done
