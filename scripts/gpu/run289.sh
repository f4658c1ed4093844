#!/usr/bin/env bash
# Session 44, main at its end after the last review: the gate's bench (P
# checked against bench's caches, the verdict printed before a bench error),
# the GPU tests' sampling cases on sample.Default*. Every engine/gpu GPU
# test, the gate with bench (default and 0.8B q8_0), greedy cuda == cpu.
# carry ["bin"]. ~2 min.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b" "q8_0"
./bin/main/memra version
gpu_tests main
wait_synth
el gates
./bin/main/gate default 64 256 bench > /tmp/g.txt 2>&1; echo "gate default bench: rc $?"; grep -E 'decode tok/s|captures|gate (PASS|FAIL)|MISMATCH|note' /tmp/g.txt
./bin/main/gate "$M/0.8b-q8_0.gguf" 64 256 bench > /tmp/g2.txt 2>&1; echo "gate 0.8b-q8_0 bench: rc $?"; grep -E 'decode tok/s|gate (PASS|FAIL)|MISMATCH' /tmp/g2.txt
el "greedy 0.8b-q8_0"
greedy main "$M/0.8b-q8_0.gguf"
el done
