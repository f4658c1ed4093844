#!/usr/bin/env bash
# Session 42, main at its end (gpu.Options.Fatbin and bench -fatbin; kernel
# images' sizes checked before the driver loads them; memra's
# output write check; matvec.cu's warning gone with a byte-identical
# fatbin): every engine/gpu GPU test (TestGPUFatbinOption new), gates on
# the default model and 0.8B q8_0 (f16 and FP8 KV), 24 greedy tokens cuda
# against cpu, and bench -fatbin with a file that is no kernel image and
# with run276's nvcc 13 build (bin/nv13.fatbin), then -compare against the
# embedded build; a truncated fatbin refused before the driver sees it. carry ["bin"]. ~5 min.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b" "q8_0"
gpu_tests main
wait_synth
el "gates"
echo "gate default: $(timeout 200 ./bin/main/gate 2>/dev/null | grep -E 'gate (PASS|FAIL)|MISMATCH' | head -3 | tr '\n' ' ')"
gate main "$M/0.8b-q8_0.gguf" 64 128 0
gate main "$M/0.8b-q8_0.gguf" 300 128 1
el "greedy 0.8b-q8_0"
greedy main "$M/0.8b-q8_0.gguf"
el "bench -fatbin"
head -c 4096 /dev/urandom > /tmp/junk.fatbin
./bin/main/bench -model "$M/0.8b-q8_0.gguf" -ctx 1024 -fatbin /tmp/junk.fatbin; echo "rc $?"
head -c 100000 bin/nv13.fatbin > /tmp/cut.fatbin
./bin/main/bench -model "$M/0.8b-q8_0.gguf" -ctx 1024 -fatbin /tmp/cut.fatbin; echo "rc $?"
./bin/main/bench -model "$M/0.8b-q8_0.gguf" -ctx 1024 -reps 3 -tokens 64 -sampled=false -out /tmp/b0 2>/dev/null | grep -E '\| graph \|' | cut -d'|' -f2,4,5,6,9,13
./bin/main/bench -model "$M/0.8b-q8_0.gguf" -ctx 1024 -reps 3 -tokens 64 -sampled=false -fatbin bin/nv13.fatbin -out /tmp/b13 2>/dev/null | grep -E 'fatbin|\| graph \|' | cut -c1-200
./bin/main/bench -compare /tmp/b0/latest.json /tmp/b13/latest.json | grep -E 'Note|geomean|\| graph \|'
el done
