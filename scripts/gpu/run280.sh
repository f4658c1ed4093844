#!/usr/bin/env bash
# Session 43, main after the robustness fixes (no kernel changed): every
# engine/gpu GPU test and engine/cuda's, the gates (default, 0.8B q8_0 f16
# and FP8, MEMRA_PDL=0), the gate's new behaviours on a GPU (MEMRA_PDL=off
# refused with exit 2, the note of a run crossing one bucket), greedy
# tokens cuda == cpu, and bench's recorded revision (-buildvcs) and its
# -compare of a report with no row in common (exit 1). carry ["bin"]. ~3 min.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b" "q8_0"
./bin/main/memra version
gpu_tests main
el "engine/cuda tests"
(cd engine/cuda && timeout 60 "$R/bin/main/engine_cuda.test" -test.v 2>&1 | grep -E "^(--- |ok|FAIL|PASS)|panic" | grep -v "^    ")
wait_synth
el gates
echo "gate default: $(timeout 200 ./bin/main/gate 2>/dev/null | grep -E 'gate (PASS|FAIL)|MISMATCH' | head -3 | tr '\n' ' ')"
echo "gate default MEMRA_PDL=0: $(MEMRA_PDL=0 timeout 200 ./bin/main/gate 2>/dev/null | grep -E 'gate (PASS|FAIL)|MISMATCH' | head -3 | tr '\n' ' ')"
gate main "$M/0.8b-q8_0.gguf" 64 256 0
gate main "$M/0.8b-q8_0.gguf" 300 256 1
MEMRA_PDL=off ./bin/main/gate default 8 8; echo "MEMRA_PDL=off: rc $?"
./bin/main/gate default 8 4 2>/dev/null | grep -E 'buckets|note|gate (PASS|FAIL)'; echo "N=4: rc ${PIPESTATUS[0]}"
el "greedy 0.8b-q8_0"
greedy main "$M/0.8b-q8_0.gguf"
el "bench"
./bin/main/bench -model "$M/0.8b-q8_0.gguf" -ctx 1024 -reps 3 -tokens 64 -sampled=false -out /tmp/b 2>&1 | grep -E 'results in|\| graph \|' | cut -c1-160
grep -m1 '"revision"' /tmp/b/latest.json
./bin/main/bench -model "$M/0.8b-q8_0.gguf" -ctx 100 -reps 1 -tokens 16 -sampled=false -out /tmp/b2 -compare docs/results/h200-run271.json 2>&1 | grep -E 'no rows|results in'; echo "compare with no row in common: rc ${PIPESTATUS[0]}"
cp /tmp/b/latest.json "$OUT/bench.json"
el done
