#!/usr/bin/env bash
# Session 54, after the review of step 101: the staged kernels' rings for
# q8_0 only (the dead 16-bit ring geometry and the copy's element path
# gone), the staged prefill test on the all-q8_0 model too and on grids of
# 3 blocks (its rings across the ends of units), compute-sanitizer memcheck
# and racecheck over the q8_0 batch kernel cases (staged ones included).
# bin/prev is 54a4c5e (step 101 as first landed), bin/main the mend; prime
# time at P=512 alternated twice (the kernels' code moved). carry ["bin"].
# ~7 min.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b 9b" "q8_0"
el "batch and prefill GPU tests (main)"
(cd engine/gpu && timeout 150 "$R/bin/main/engine_gpu.test" -test.run 'KernelMatvecBatch|PrefillMatchesTokenFeed|GraphEqualsEager|SessionFeed|EarlyLoads|MatvecShared' -test.v -test.timeout 140s > "$OUT/gputest.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|FAIL|panic" "$OUT/gputest.txt" | grep -v "^    --- PASS" | head -40
grep -E -- '--- (PASS|FAIL): TestGPUPrefillMatchesTokenFeed/.*staged' "$OUT/gputest.txt"
CS=/usr/local/cuda/bin/compute-sanitizer
mkdir -p /tmp/cs
cs() {
  local name=$1 secs=$2 tool=$3; shift 3
  el "cs $name ($tool)"
  timeout "$secs" "$CS" --tool "$tool" --error-exitcode 9 --print-limit 20 "$@" > "/tmp/cs/$name.txt" 2>&1
  local rc=$?
  echo "  rc $rc: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "/tmp/cs/$name.txt" | tail -1) $(grep -E '^(ok|FAIL|PASS)$' "/tmp/cs/$name.txt" | head -1)"
  echo "  subtests passed: $(grep -c -- '--- PASS' "/tmp/cs/$name.txt"), failed: $(grep -c -- '--- FAIL' "/tmp/cs/$name.txt")"
  grep -E '^========= (Invalid|Uninitialized|Error|Race|Barrier|Warning)' "/tmp/cs/$name.txt" | sort | uniq -c | head -8
}
(cd engine/gpu && cs memcheck-batch-q8 150 memcheck "$R/bin/main/engine_gpu.test" -test.run 'TestGPUKernelMatvecBatch/Q8_0' -test.v -test.timeout 145s)
(cd engine/gpu && cs racecheck-batch-q8 150 racecheck "$R/bin/main/engine_gpu.test" -test.run 'TestGPUKernelMatvecBatch/Q8_0' -test.v -test.timeout 145s)
tar czf "$OUT/cs.tgz" -C /tmp cs
wait_synth
ms="$M/0.8b-q8_0.gguf,$M/9b-q8_0.gguf"
i=0
for b in prev main prev main; do
  i=$((i+1)); d=/tmp/bp/$i-$b; rm -rf $d; mkdir -p $d
  el "bench prime P=512 ($b)"
  timeout 150 ./bin/$b/bench -model "$ms" -ctx 1024 -reps 3 -tokens 64 -prompt 512 -sampled=false -out $d > $d/stdout.txt 2> $d/stderr.txt
  echo "rc $?"
  grep -E 'prime' $d/stderr.txt
done
el "gates (main)"
timeout 100 ./bin/main/gate > "$OUT/gate-default.txt" 2>&1
echo "  rc $?: $(grep -E 'gate (PASS|FAIL)|MISMATCH' "$OUT/gate-default.txt" | head -3 | tr '\n' ' ')"
gate main "$M/0.8b-q8_0.gguf" 300 256 1
gate main "$M/9b-q8_0.gguf" 300 64 0
el done
