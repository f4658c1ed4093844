#!/usr/bin/env bash
# Session 44: the race detector on the H200. bin/race holds engine/gpu's and
# engine/cuda's test binaries and the gate and memra built with -race
# (CGO_ENABLED=1, glibc 2.36 here): the engine thread, the purego calls and
# the run-ahead token read-back under the detector, where the CPU-only tests
# never reach them. carry ["bin"]. ~4 min.
set -u
source scripts/gpu/lib.sh
start_run
ldd bin/race/gate | head -3
el "engine/cuda tests (-race)"
(cd engine/cuda && timeout 120 "$R/bin/race/engine_cuda.test" -test.v 2>&1 | grep -E "^(--- |ok|FAIL|PASS)|panic|DATA RACE" | grep -v "^    " | grep -vE '^--- PASS' ; echo "rc ${PIPESTATUS[0]}")
el "engine/gpu tests (-race)"
(cd engine/gpu && timeout 300 "$R/bin/race/engine_gpu.test" -test.run 'GPUDecode|GPUGraph|GPUSession|GPUFixtures|HostSync|FillSynthetic|NaNWeights|Profile|Omit|Fatbin|SampleDraw|Penalty' -test.v -test.timeout 290s > "$OUT/race-gpu.txt" 2>&1; echo "rc $?")
grep -E "^(--- |ok|FAIL|PASS)|panic|DATA RACE" "$OUT/race-gpu.txt" | grep -v "^    " | head -40
el "gate (-race)"
timeout 200 ./bin/race/gate > /tmp/gr.txt 2>&1; echo "gate rc $?"; grep -E 'gate (PASS|FAIL)|DATA RACE' /tmp/gr.txt | head -5
el "memra run (-race)"
./bin/race/memra synth --preset tiny -o /tmp/tiny.gguf > /dev/null 2>&1
timeout 120 ./bin/race/memra run -m /tmp/tiny.gguf --prompt-tokens 1,2,3 -n 200 --device cuda --json > /tmp/mr.json 2> /tmp/mr.err; echo "memra run sampled rc $?"; grep -c 'DATA RACE' /tmp/mr.err
timeout 120 ./bin/race/memra run -m /tmp/tiny.gguf --prompt-tokens 1,2,3 -n 200 --device cuda --greedy --json > /tmp/mg.json 2> /tmp/mg.err; echo "memra run greedy rc $?"; grep -c 'DATA RACE' /tmp/mg.err
el done
