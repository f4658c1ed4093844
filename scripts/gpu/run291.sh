#!/usr/bin/env bash
# Session 45, main after the reviews of the CLI, bench, limits, GGUF,
# sampling, fresh-machine, CPU backend and library API: the driver is now
# loaded through dl_unix.go (engine/cuda builds on Windows), gpu.Load checks
# the model's file is open, the gate's default model is v2 in a per-user
# folder, bench's tok/s is 1000 / ms. No kernel changed. Every engine/gpu
# and engine/cuda GPU test, gates (default with BENCH, 0.8B q8_0 with
# bench), greedy cuda == cpu, bench at 1k against run271. carry ["bin"].
# ~3 min.
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
./bin/main/gate default 64 256 bench > /tmp/g.txt 2>&1; echo "gate default bench: rc $?"; grep -E 'synthesising|decode tok/s|captures|gate (PASS|FAIL)|MISMATCH|note' /tmp/g.txt
./bin/main/gate "$M/0.8b-q8_0.gguf" 64 256 bench > /tmp/g2.txt 2>&1; echo "gate 0.8b-q8_0 bench: rc $?"; grep -E 'decode tok/s|gate (PASS|FAIL)|MISMATCH' /tmp/g2.txt
el "greedy 0.8b-q8_0"
greedy main "$M/0.8b-q8_0.gguf"
el "bench"
./bin/main/bench -model "$M/0.8b-q8_0.gguf" -ctx 1024 -reps 3 -tokens 64 -out /tmp/b -compare docs/results/h200-run271.json 2>&1 | grep -E 'results in|\| graph \||\| sampled \||geomean|captures' | cut -c1-200
el done
