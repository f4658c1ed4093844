#!/usr/bin/env bash
# Session 59, branch next/q40: Q4_0 and IQ4_NL matrices on kernels of their
# own (ktile.Q40, ktile.IQ4NL: the code planes of Q3_K's and IQ4_XS's tiles
# with an f16 d a 32-column block; matvec_{q4_0,iq4_nl}[_wide][_lean],
# matvec_batch_*[_wide], embed_*), which main stores as Q8_0 (run339: 9B
# Q4_0 at 9B Q8_0's 372 tok/s). bin/q40 is this branch (scripts/gpu/bins.sh
# q40=next/q40; carry ["bin"]). Cut to what fits the session's last ~3
# minutes of device time: the Q4_0 and IQ4_NL kernel, batch, embed,
# prefill, recoded and decode-against-CPU tests; gates; bench at 1k beside
# Q8_0.
# Prediction: Q4_0's loop is 268 SASS instructions an item (Q3_K's 278) on
# 2,304-byte tiles, so 9B Q4_0 near 9B Q3_K's 487 tok/s (run340), ~1.3x
# its recoded form (9B Q8_0's speed).
set -u
source scripts/gpu/lib.sh
start_run
synth q40 "0.8b 9b" "q4_0"
synth9=$SYNTH
synth q40 "9b" "q8_0"
SYNTH="$SYNTH $synth9"
el "Q4_0 and IQ4_NL GPU tests (q40)"
(cd engine/gpu && timeout 100 "$R/bin/q40/engine_gpu.test" -test.run 'KernelMatvec/(Q4_0|IQ4_NL)|KernelMatvecBatch/(Q4_0|IQ4_NL)|KernelEmbed/(Q4_0|IQ4_NL)|DecodeMatchesCPU/qwen35-(recoded|q4_0|iq4_nl)|RecodedEqualsWide|PrefillMatchesTokenFeed/(Q4_0|recoded)' -test.v -test.timeout 95s > "$OUT/gputest-q40.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|FAIL|panic|worst relative|identical" "$OUT/gputest-q40.txt" | grep -v "^    --- PASS" | head -30
echo "kernel cases passed: matvec $(grep -cE -- '--- PASS: TestGPUKernelMatvec/(Q4_0|IQ4_NL)' "$OUT/gputest-q40.txt"), batch $(grep -cE -- '--- PASS: TestGPUKernelMatvecBatch/(Q4_0|IQ4_NL)' "$OUT/gputest-q40.txt"), failed $(grep -c -- '--- FAIL' "$OUT/gputest-q40.txt")"
grep -E -- '--- FAIL' "$OUT/gputest-q40.txt" | head -10
wait_synth
el "gates (q40)"
gate q40 "$M/0.8b-q4_0.gguf" 300 256 0
gate q40 "$M/9b-q4_0.gguf" 64 64 1
el "bench 9b at 1k (q40)"
d=/tmp/bq4; mkdir -p $d
timeout 60 ./bin/q40/bench -model "$M/9b-q4_0.gguf,$M/9b-q8_0.gguf" -ctx 1024 -reps 3 -tokens 64 -sampled=false -out $d > $d/stdout.txt 2> $d/stderr.txt
grep -E '\| graph \|' $d/stdout.txt | cut -d'|' -f2,4,5,6,9
tar czf "$OUT/bench-q40.tgz" -C /tmp bq4
el done
