#!/usr/bin/env bash
# Session 57 (prepared without a GPU; not run yet): the lean matvec kernels
# (kernels/matvec_lean.cu: one ring slot a warp) and the load's choice of a
# form with fewer slots where a GPU allows a block too little shared memory
# (sm_86/sm_89: 101,376 bytes), which MEMRA_SHARED_LIMIT makes an H200 do.
# Every engine/gpu GPU test (TestGPUKernelMatvecLean: lean == usual bit for
# bit; TestGPUKernelMatvec's and TestGPUKernelMatvecBatch's lean cases;
# TestGPUMatvecSharedLimit; TestGPULeanEqualsUsual: tokens at the limit ==
# without); memcheck and racecheck on lean cases; 9B Q6_K (its 12,288-column
# down projection takes the wide lean kernel at the limit) gated and its 64
# greedy tokens compared with and without the limit, and timed both ways at
# 1k (what the lean kernel costs where it is not needed).
# Binaries: go tool mage cuda:bins; mkdir -p /tmp/binall/main; cp
# bin/{memra,gate,bench,engine_gpu.test} /tmp/binall/main/; XZ_OPT=-9 tar
# cJf bin/bin.txz -C /tmp/binall . ; carry ["bin"]. ~8 min.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b 9b" "q6_k"
gpu_tests main
echo "lean cases passed: matvec $(grep -cE -- '--- PASS: TestGPUKernelMatvec/Q[456]_K-lean' "$OUT/gputest.txt"), batch $(grep -cE -- '--- PASS: TestGPUKernelMatvecBatch/Q[456]_K-lean' "$OUT/gputest.txt")"
grep -E "TestGPUMatvecSharedLimit|widest rows|tokens identical: usual and lean" "$OUT/gputest.txt" | head -8
CS=/usr/local/cuda/bin/compute-sanitizer
for tool in memcheck racecheck; do
  el "compute-sanitizer $tool, lean kernels"
  (cd engine/gpu && timeout 120 $CS --tool $tool --error-exitcode 9 --print-limit 20 "$R/bin/main/engine_gpu.test" -test.run '^TestGPUKernelMatvec$/Q[456]_K-lean-wide[01]-(1003x1024|37x12288|2050x512)-blocks' -test.v -test.timeout 115s > "$OUT/cs-$tool.txt" 2>&1; echo "  rc $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/cs-$tool.txt" | tail -1), subtests passed $(grep -c -- '--- PASS' "$OUT/cs-$tool.txt"), failed $(grep -c -- '--- FAIL' "$OUT/cs-$tool.txt")")
done
wait_synth
el "gates at the sm_89 limit"
MEMRA_SHARED_LIMIT=101376 gate main "$M/9b-q6_k.gguf" 300 64 0
MEMRA_SHARED_LIMIT=101376 gate main "$M/0.8b-q6_k.gguf" 300 256 1
el "64 greedy tokens, 9b-q6_k, without and with the limit"
for lim in "" 101376; do
  MEMRA_SHARED_LIMIT=$lim timeout 90 ./bin/main/memra run -m "$M/9b-q6_k.gguf" --prompt-tokens "$(seq -s, 100 399)" -n 64 --greedy --print-tokens --device cuda > "/tmp/tok-lim$lim.txt" 2>&1
  echo "limit '${lim}': $(grep -E '^[0-9 ,]+$' "/tmp/tok-lim$lim.txt" | head -1 | cut -c1-80)…"
done
grep -E '^memra: .* run matvec' /tmp/tok-lim101376.txt
cmp -s <(grep -E '^[0-9 ,]+$' /tmp/tok-lim.txt) <(grep -E '^[0-9 ,]+$' /tmp/tok-lim101376.txt) && grep -qE '^[0-9 ,]+$' /tmp/tok-lim.txt && echo "tokens equal" || echo "tokens DIFFER or missing"
mkdir -p /tmp/bl
for lim in "" 101376 "" 101376; do
  el "bench 9b-q6_k 1k, MEMRA_SHARED_LIMIT='$lim'"
  d=/tmp/bl/lim$lim-$(date +%s); mkdir -p $d
  MEMRA_SHARED_LIMIT=$lim timeout 100 ./bin/main/bench -model "$M/9b-q6_k.gguf" -ctx 1024 -reps 3 -tokens 64 -prompt 512 -sampled=false -out $d > $d/stdout.txt 2> $d/stderr.txt
  grep -E 'prime' $d/stderr.txt; grep -E '\| graph \|' $d/stdout.txt | cut -d'|' -f2,4,5,6,9
done
tar czf "$OUT/bench-lean.tgz" -C /tmp bl
el done
