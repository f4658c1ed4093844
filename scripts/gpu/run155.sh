#!/usr/bin/env bash
# Session 23, step 70 (branch next/q8-head): bin/main = main (6fc00d5),
# bin/new = the branch: the matvec heads' loads kept before the wait (weak
# loads; every HL kernel had them after it in SASS) and matvec_q8_0_head for
# the <=1,024-row q8_0 matrices under MEMRA_MV_HEAD=1 (exported for the whole
# run: main does not read it). Matvec and decode GPU tests (new), 64 greedy
# tokens main == new on 0.8B bf16 and q8_0 (same sums by construction), a
# gate, bench at 1k main/new twice. carry ["bin"]. ~5 minutes.
set -u
source scripts/gpu/lib.sh
start_run
export MEMRA_MV_HEAD=1
synth new "0.8b 9b" "bf16 q8_0"
el "matvec and decode GPU tests (new, MEMRA_MV_HEAD=1)"
(cd engine/gpu && timeout 200 "$R/bin/new/engine_gpu.test" -test.run 'KernelMatvec|MatvecShared|LaneScales|MVHead|DecodeMatchesCPU|GraphEqualsEager|SessionEqualsEager' -test.v -test.timeout 190s > "$OUT/gputest.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|panic" "$OUT/gputest.txt" | grep -v "^    --- PASS" | head -20
grep -c -- "--- PASS: TestGPUKernelMatvec/q8_0-wide3" "$OUT/gputest.txt" | sed 's/^/head-form matvec cases passed: /'
wait_synth
el "64 greedy tokens main == new"
tokens_cmp main new "0.8b-q8_0 0.8b-bf16"
el "gate (new, 0.8B q8_0 with the head form)"
gate new $M/0.8b-q8_0.gguf 64 256 0
bench_rotation "$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-bf16.gguf,$M/9b-q8_0.gguf" 1024 main new main new
el done
