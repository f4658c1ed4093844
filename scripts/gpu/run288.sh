#!/usr/bin/env bash
# Session 44, main after the gate's review against the Rust reference: the
# gate FAILs unless the graph path captured one graph per bucket crossed,
# graph-path errors are FAILs, DecodeStepDC and ContinueGraph refuse
# counters not at the cache's length, TestGPUDecodeStepDCEqualsEager new.
# Every engine/gpu and engine/cuda GPU test, the gates (default, PDL off,
# 0.8B q8_0 f16 and FP8 at P=300, N=1), greedy cuda == cpu, a sampled run's
# seed repeating it, bench 0.8B q8_0 at 1k against run271. carry ["bin"].
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b" "q8_0"
./bin/main/memra version
gpu_tests main
grep -E 'DecodeStepDC|GraphEqualsEager' "$OUT/gputest.txt" | head -6
el "engine/cuda tests"
(cd engine/cuda && timeout 60 "$R/bin/main/engine_cuda.test" -test.v 2>&1 | grep -E "^(--- |ok|FAIL|PASS)|panic" | grep -v "^    " | grep -v '^--- PASS')
wait_synth
el gates
./bin/main/gate > /tmp/g.txt 2>&1; echo "gate default: rc $?"; grep -E 'buckets crossed|captures|gate (PASS|FAIL)|MISMATCH' /tmp/g.txt
echo "gate default MEMRA_PDL=0: $(MEMRA_PDL=0 timeout 200 ./bin/main/gate 2>/dev/null | grep -E 'gate (PASS|FAIL)|MISMATCH' | head -3 | tr '\n' ' ')"
gate main "$M/0.8b-q8_0.gguf" 64 256 0
gate main "$M/0.8b-q8_0.gguf" 300 256 1
./bin/main/gate default 8 1 2>&1 | grep -E 'note|gate (PASS|FAIL)'; echo "N=1: rc ${PIPESTATUS[0]}"
el "greedy 0.8b-q8_0"
greedy main "$M/0.8b-q8_0.gguf"
tok() { grep -o '"tokens":\[[0-9,]*\]' "$1"; }
./bin/main/memra run -m "$M/0.8b-q8_0.gguf" --prompt-tokens 1,2,3 -n 24 --json --device cuda > /tmp/s1.json 2>/dev/null
seed=$(grep -o '"seed":[0-9]*' /tmp/s1.json | cut -d: -f2)
./bin/main/memra run -m "$M/0.8b-q8_0.gguf" --prompt-tokens 1,2,3 -n 24 --json --device cuda --seed "$seed" > /tmp/s2.json 2>/dev/null
[ -n "$(tok /tmp/s1.json)" ] && [ "$(tok /tmp/s1.json)" = "$(tok /tmp/s2.json)" ] && echo "sampled seed $seed repeats the run on the GPU" || echo "the seed does NOT repeat the run"
el "bench"
./bin/main/bench -model "$M/0.8b-q8_0.gguf" -ctx 1024 -reps 3 -tokens 64 -out /tmp/b -compare docs/results/h200-run271.json 2>&1 | grep -E 'results in|\| (graph|sampled) \||geomean' | cut -c1-200
el done
