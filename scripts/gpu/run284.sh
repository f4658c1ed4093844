#!/usr/bin/env bash
# Session 44, main after five reviews' fixes: sample_draw gives the best
# logit weight 1 without the subtraction (a +Inf logit is drawn, all -Inf
# are uniform; the only kernel changed), a panic in a capture ends it,
# GenerateGraph/ContinueGraph/NewCache bounds, closed caches refused. Every
# engine/gpu GPU test (TestGPUKernelSampleDraw among them) and engine/cuda's
# (TestGPUPanicInsideCaptureEndsIt), the gates, greedy cuda == cpu, a
# sampled run's seed repeating it, bench 0.8B q8_0 at 1k (graph and
# sampled, against run271), and a bench context past the model's, refused.
# carry ["bin"]. ~4 min.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b" "q8_0"
./bin/main/memra version
gpu_tests main
grep -E 'SampleDraw' "$OUT/gputest.txt" | head -12
el "engine/cuda tests"
(cd engine/cuda && timeout 60 "$R/bin/main/engine_cuda.test" -test.v 2>&1 | grep -E "^(--- |ok|FAIL|PASS)|panic" | grep -v "^    ")
wait_synth
el gates
echo "gate default: $(timeout 200 ./bin/main/gate 2>/dev/null | grep -E 'gate (PASS|FAIL)|MISMATCH' | head -3 | tr '\n' ' ')"
gate main "$M/0.8b-q8_0.gguf" 64 256 0
gate main "$M/0.8b-q8_0.gguf" 300 256 1
el "greedy 0.8b-q8_0"
greedy main "$M/0.8b-q8_0.gguf"
tok() { grep -o '"tokens":\[[0-9,]*\]' "$1"; }
./bin/main/memra run -m "$M/0.8b-q8_0.gguf" --prompt-tokens 1,2,3 -n 24 --json --device cuda > /tmp/s1.json 2>/dev/null
seed=$(grep -o '"seed":[0-9]*' /tmp/s1.json | cut -d: -f2)
./bin/main/memra run -m "$M/0.8b-q8_0.gguf" --prompt-tokens 1,2,3 -n 24 --json --device cuda --seed "$seed" > /tmp/s2.json 2>/dev/null
echo "sampled seed $seed: $(tok /tmp/s1.json | cut -c1-80)"
[ -n "$(tok /tmp/s1.json)" ] && [ "$(tok /tmp/s1.json)" = "$(tok /tmp/s2.json)" ] && echo "its seed repeats the run on the GPU" || echo "the seed does NOT repeat the run"
el "bench"
./bin/main/bench -model "$M/0.8b-q8_0.gguf" -ctx 1024 -reps 3 -tokens 64 -out /tmp/b -compare docs/results/h200-run271.json 2>&1 | grep -E 'results in|\| (graph|sampled) \||geomean|ratio' | cut -c1-200
cp /tmp/b/latest.json "$OUT/bench.json"
./bin/main/bench -model "$M/0.8b-q8_0.gguf" -ctx 300000 -reps 1 -tokens 8 -sampled=false -out /tmp/b3 2>&1 | grep -iE 'context|error' | head -3; echo "ctx past the model's: rc ${PIPESTATUS[0]}"
el done
