#!/usr/bin/env bash
# Session 46: run296's memcheck took 10 s on TestGPUKernelMatvec without its
# 4096 × 4096 cases, so this runs the whole test under memcheck, and its
# K-quant cases (the 4096 × 4096 ones included) under racecheck. The
# binaries of run296. Outputs as $OUT/cs.tgz. carry ["bin"]. At most ~8 min.
set -u
source scripts/gpu/lib.sh
start_run
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
(cd engine/gpu && cs memcheck-matvec-all 280 memcheck "$R/bin/main/engine_gpu.test" -test.run 'TestGPUKernelMatvec' -test.v -test.timeout 275s)
(cd engine/gpu && cs racecheck-matvec-kq-all 180 racecheck "$R/bin/main/engine_gpu.test" -test.run 'TestGPUKernelMatvec/Q[456]_K' -test.v -test.timeout 175s)
tar czf "$OUT/cs.tgz" -C /tmp cs
el done
