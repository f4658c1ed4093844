#!/usr/bin/env bash
# Session 45: run292's sanitizer sweep on the kernels the tiny model does
# not run: racecheck and initcheck on 0.8B q8_0 and Q4_K gates (the
# shared-memory rings of the tensor-core K-quant matvecs, the q8_0 kernels,
# the attention splits at head_dim 256), memcheck on the 9B Q4_K gate (the
# wide and wave forms of 4,096-row matrices) and on engine/gpu's kernel
# tests (every kernel on random shapes; TestGPUKernelMatvec apart, too long
# under the tool). The binaries of run292. The sanitizer outputs come back
# as one tarball ($OUT/cs.tgz). carry ["bin"]. At most ~9 min.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b" "q8_0 q4_k"
s1=$SYNTH
synth main "9b" "q4_k"
SYNTH="$SYNTH $s1"
CS=/usr/local/cuda/bin/compute-sanitizer
mkdir -p /tmp/cs
cs() {
  local name=$1 secs=$2 tool=$3; shift 3
  el "cs $name ($tool)"
  timeout "$secs" "$CS" --tool "$tool" --error-exitcode 9 --print-limit 20 "$@" > "/tmp/cs/$name.txt" 2>&1
  local rc=$?
  echo "  rc $rc: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "/tmp/cs/$name.txt" | tail -1) $(grep -E 'gate (PASS|FAIL)|^(ok|FAIL|PASS)$' "/tmp/cs/$name.txt" | head -1)"
  grep -E '^========= (Invalid|Uninitialized|Error|Race|Barrier|Warning)' "/tmp/cs/$name.txt" | sort | uniq -c | head -8
}
(cd engine/gpu && cs memcheck-kernel-tests 150 memcheck "$R/bin/main/engine_gpu.test" -test.run 'TestGPUKernel[^M]|TestGPUMatvecSharedLimit' -test.timeout 140s)
wait_synth
cs racecheck-08b-q8_0 100 racecheck ./bin/main/gate "$M/0.8b-q8_0.gguf" 2 2
cs racecheck-08b-q4_k 100 racecheck ./bin/main/gate "$M/0.8b-q4_k.gguf" 2 2
cs initcheck-08b-q4_k 60 initcheck ./bin/main/gate "$M/0.8b-q4_k.gguf" 4 4
cs memcheck-9b-q4_k 90 memcheck ./bin/main/gate "$M/9b-q4_k.gguf" 4 4
tar czf "$OUT/cs.tgz" -C /tmp cs
el done
