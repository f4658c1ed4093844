#!/usr/bin/env bash
# Session 23, step 70's follow-up (branch next/bf16-wide-head): the wide
# f16/bf16 kernels with HL = 1, now that head loads really leave before the
# wait (step 23 measured HL there with its loads sunk past it by ptxas).
# bin/main = main (7dc3fb9), bin/new = the branch (78 registers, 3 blocks an
# SM as before). Matvec and decode GPU tests (new), 64 greedy tokens main ==
# new on 0.8B bf16, a gate, bench main/new at 1k twice on 0.8B bf16 (its down
# and output projections are the wide bf16 matrices). carry ["bin"]. ~2.5 minutes.
set -u
source scripts/gpu/lib.sh
start_run
synth new "0.8b" "bf16"
el "matvec and decode GPU tests (new)"
(cd engine/gpu && timeout 150 "$R/bin/new/engine_gpu.test" -test.run 'KernelMatvec|DecodeMatchesCPU|GraphEqualsEager' -test.v -test.timeout 140s > "$OUT/gputest.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|panic" "$OUT/gputest.txt" | grep -v "^    --- PASS" | head -10
wait_synth
tokens_cmp main new "0.8b-bf16"
gate new $M/0.8b-bf16.gguf 64 256 0
bench_rotation "$M/0.8b-bf16.gguf" 1024 main new main new
el done
