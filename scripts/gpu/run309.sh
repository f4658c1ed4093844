#!/usr/bin/env bash
# Session 51, main with this session's host-side changes (memra's progress
# units, singular notes, version/help refusing extra arguments; gate's
# bench hint; tests only elsewhere): every engine/gpu GPU test, the default
# gate and a bench gate on 0.8B q8_0, memra run on the GPU with --json.
# carry ["bin"]. ~3 min.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b" "q8_0"
gpu_tests main
grep -cE '^--- FAIL|^FAIL|panic' "$OUT/gputest.txt"
el "default gate"
timeout 150 ./bin/main/gate > "$OUT/gate-default.txt" 2>&1
echo "  rc $?: $(grep -E 'gate (PASS|FAIL)|MISMATCH|captures:' "$OUT/gate-default.txt" | head -3 | tr '\n' ' ')"
wait_synth
el "gate 0.8b q8_0 P=64 N=256 bench"
timeout 150 ./bin/main/gate "$M/0.8b-q8_0.gguf" 64 256 bench 2>&1 | grep -E 'tok/s|gate (PASS|FAIL)|captures'
echo "  rc ${PIPESTATUS[0]}"
el "memra run on cuda"
timeout 60 ./bin/main/memra run -m "$M/0.8b-q8_0.gguf" --prompt-tokens 100,107,114 -n 32 --greedy --device cuda --json 2>&1 | cut -c1-400
echo "  rc ${PIPESTATUS[0]}"
./bin/main/gate "$M/0.8b-q8_0.gguf" bench; echo "  rc $? (bench out of place)"
./bin/main/memra version extra; echo "  rc $?"
./bin/main/memra version
el done
