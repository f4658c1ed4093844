#!/usr/bin/env bash
# Session 39: the 2B and 27B presets on the GPU for the first time (no run
# before this one loaded them): 2B bf16 and q8_0, 27B q8_0 (27B bf16's 54 GB
# file does not fit beside them on the machine's 64 GB disk). 27B is the
# first preset with 3 V heads per K head in its DeltaNet layers, 6 query
# heads per KV head, 5,120-wide rows and 64 layers. The gates (FP8 KV off
# and on), 24 greedy tokens cuda against cpu, bench at 64, 1k, 4k and 32k,
# and bench -profile 8 of 27B q8_0 at 1k. carry ["bin"]. ~5 min.
set -u
source scripts/gpu/lib.sh
start_run
el "synth 2b bf16 q8_0, 27b q8_0"
synth main "2b" "bf16 q8_0"; S1=$SYNTH
synth main "27b" "q8_0"; SYNTH="$S1 $SYNTH"
wait_synth
ls -la "$M" | grep gguf
# gate_full MODEL P N FP8: lib.sh's gate line, or the output's last lines
# when it has none (a load error on an untried preset must show).
gate_full() {
  local o="$OUT/gate-$(basename "$1" .gguf)-$2-$4.txt"
  MEMRA_KV_FP8=$4 timeout 200 ./bin/main/gate "$1" "$2" "$3" > "$o" 2>&1
  echo "gate $(basename "$1" .gguf) P=$2 N=$3 fp8=$4 (exit $?): $(grep -E 'gate (PASS|FAIL)|MISMATCH|buckets crossed' "$o" | head -3 | tr '\n' ' ')"
  grep -qE 'gate PASS' "$o" || tail -5 "$o"
}
el "gates"
gate_full "$M/2b-bf16.gguf" 64 256 0
gate_full "$M/2b-q8_0.gguf" 300 256 1
gate_full "$M/27b-q8_0.gguf" 64 128 0
gate_full "$M/27b-q8_0.gguf" 300 64 1
el "greedy 2b-q8_0"
greedy main "$M/2b-q8_0.gguf"
el "greedy 27b-q8_0"
greedy main "$M/27b-q8_0.gguf"
el "bench"
mkdir -p /tmp/b
timeout 240 ./bin/main/bench -model "$M/2b-bf16.gguf,$M/2b-q8_0.gguf,$M/27b-q8_0.gguf" -ctx 64,1024,4096,32768 -reps 3 -tokens 64 -out /tmp/b \
  > /tmp/b/stdout.txt 2>/tmp/b/stderr.txt
grep -E '\| (graph|eager|sampled) \||copy bandwidth|^\| (2b|27b)' /tmp/b/stdout.txt | head -60
tar czf "$OUT/bench.tgz" -C /tmp b
el "bench -profile 8, 27b-q8_0 at 1k"
timeout 120 ./bin/main/bench -model "$M/27b-q8_0.gguf" -ctx 1024 -reps 1 -tokens 16 -profile 8 -out /tmp/p 2>/dev/null | grep -E '^\| (matvec|gdn|rms|attn|embed)' | head -16
el done
