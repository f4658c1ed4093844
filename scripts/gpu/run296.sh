#!/usr/bin/env bash
# Session 46: close run293's two gaps in the compute-sanitizer sweep.
# memcheck on TestGPUKernelMatvec without its 4096 × 4096 cases (every
# matvec variant on the other 17 shapes, misaligned and persistent grids
# included), racecheck on the same test's K-quant cases (the tensor-core
# kernels' shared-memory rings, wide and wave forms), and racecheck on the
# 0.8B Q4_K gate with room for its summary (run293's 100 s ended before
# it). The binaries of main at 3544409. The outputs come back as one
# tarball ($OUT/cs.tgz). carry ["bin"]. At most ~9.5 min.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b" "q4_k"
CS=/usr/local/cuda/bin/compute-sanitizer
mkdir -p /tmp/cs
cs() {
  local name=$1 secs=$2 tool=$3; shift 3
  el "cs $name ($tool)"
  timeout "$secs" "$CS" --tool "$tool" --error-exitcode 9 --print-limit 20 "$@" > "/tmp/cs/$name.txt" 2>&1
  local rc=$?
  echo "  rc $rc: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "/tmp/cs/$name.txt" | tail -1) $(grep -E 'gate (PASS|FAIL)|^(ok|FAIL|PASS)$' "/tmp/cs/$name.txt" | head -1)"
  echo "  subtests passed: $(grep -c -- '--- PASS' "/tmp/cs/$name.txt"), failed: $(grep -c -- '--- FAIL' "/tmp/cs/$name.txt")"
  grep -E '^========= (Invalid|Uninitialized|Error|Race|Barrier|Warning)' "/tmp/cs/$name.txt" | sort | uniq -c | head -8
}
(cd engine/gpu && cs memcheck-matvec 170 memcheck "$R/bin/main/engine_gpu.test" -test.run 'TestGPUKernelMatvec/wide[0-9]-([0-9]{1,3}|1003|2050)x' -test.v -test.timeout 165s)
(cd engine/gpu && cs racecheck-matvec-kq 80 racecheck "$R/bin/main/engine_gpu.test" -test.run 'TestGPUKernelMatvec/Q[456]_K-wide[0-9]-([0-9]{1,3}|1003|2050)x' -test.v -test.timeout 75s)
wait_synth
cs racecheck-08b-q4_k 260 racecheck ./bin/main/gate "$M/0.8b-q4_k.gguf" 2 2
tar czf "$OUT/cs.tgz" -C /tmp cs
el done
