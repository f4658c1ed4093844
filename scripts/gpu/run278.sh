#!/usr/bin/env bash
# Session 42, main after the review of bench -fatbin (gpu.CheckFatbin looks
# up every kernel once before any model; a -fatbin run leaves latest.*
# alone; ELF64's header sizes required by the image check): the engine/gpu
# tests these touch (TestGPUFatbinOption with CheckFatbin, decode against
# the CPU, graph against eager), the default model's gate, and bench
# -fatbin with a file that is no kernel image, a truncated fatbin and
# run276's nvcc 13 build against the run before it (-compare
# latest.json). carry ["bin"]. ~2 min.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b" "q8_0"
el "GPU tests"
(cd engine/gpu && timeout 150 "$R/bin/main/engine_gpu.test" -test.run 'Fatbin|DecodeMatchesCPU|GraphEqualsEager' -test.v 2>&1 | grep -E "^(--- |ok|FAIL|PASS)|panic" | grep -v "^    ")
wait_synth
echo "gate default: $(timeout 200 ./bin/main/gate 2>/dev/null | grep -E 'gate (PASS|FAIL)|MISMATCH' | head -3 | tr '\n' ' ')"
el "bench -fatbin"
head -c 4096 /dev/urandom > /tmp/junk.fatbin
head -c 100000 bin/nv13.fatbin > /tmp/cut.fatbin
for f in /tmp/junk.fatbin /tmp/cut.fatbin; do ./bin/main/bench -model "$M/0.8b-q8_0.gguf" -ctx 1024 -fatbin $f; echo "rc $?"; done
./bin/main/bench -model "$M/0.8b-q8_0.gguf" -ctx 1024 -reps 3 -tokens 64 -sampled=false -out /tmp/b 2>&1 | grep -E 'results in|\| graph \|' | cut -c1-160
./bin/main/bench -model "$M/0.8b-q8_0.gguf" -ctx 1024 -reps 3 -tokens 64 -sampled=false -fatbin bin/nv13.fatbin -out /tmp/b -compare /tmp/b/latest.json 2>&1 | grep -E 'results in|Note|geomean|\| graph \|' | cut -c1-220
ls /tmp/b
el done
