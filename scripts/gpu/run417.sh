#!/usr/bin/env bash
# Session 74, step 127: the chunk's length past 32. Prime ms at P = 512 of
# new (the chunk16 branch, run416's binary) at -chunk 32, 48 and 64,
# alternated twice, on the 0.8B bf16, q8_0 and Q4_K and the 9B q8_0 and
# bf16 presets, with each run's scratch (bench's memory.scratch), on any GPU.
# carry ["bin"]; binaries as run416's.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name --format=csv,noheader
synth new "0.8b" "bf16 q8_0 q4_k"
S0=$SYNTH
synth new "9b" "q8_0 bf16"
SYNTH="$S0 $SYNTH"
wait_synth
ms="$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/0.8b-q4_k.gguf,$M/9b-q8_0.gguf,$M/9b-bf16.gguf"
mkdir -p /tmp/bp
for r in 1 2; do
  for c in 32 48 64; do
    d=/tmp/bp/$r-new-$c; mkdir -p "$d"
    el "prime P=512 round $r: -chunk $c"
    timeout 150 ./bin/new/bench -model "$ms" -ctx 64 -reps 3 -tokens 16 -prompt 512 -sampled=false -chunk "$c" -out "$d" > "$d/stdout.txt" 2> "$d/stderr.txt"
    echo "rc $?"
    grep -E 'prime' "$d/stderr.txt"
    python3 -c 'import json,sys; print("scratch MiB:", " ".join("%s %.1f" % (m["model"].split("/")[-1], m["memory"]["scratch"]/2**20) for m in json.load(open(sys.argv[1]))["models"]))' "$d/latest.json"
  done
done
tar czf "$OUT/bench-prime.tgz" -C /tmp bp
el done
