#!/usr/bin/env bash
# Session 61, after steps 107-111 landed (main at fd515d3, bin/main built by
#   bash scripts/gpu/bins.sh main=main:memra,gate,bench):
# the final main on whichever GPU the call gets, for the H200 table if it is
# one. Gates on 0.8B and 9B Q4_K_M, greedy tokens cuda == cpu on 0.8B
# Q4_K_M, and graph decode at 1k (priming at P = 512) of the mixes and the
# K-quant presets steps 107-111 changed.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
synth main "0.8b" "q4_k_m iq4_xs q6_k"
s1=$SYNTH
synth main "9b" "q4_k_m"
SYNTH="$SYNTH $s1"
wait_synth
el "gates (main)"
gate main "$M/0.8b-q4_k_m.gguf" 300 256 0
gate main "$M/9b-q4_k_m.gguf" 300 64 1
el "greedy tokens, 0.8b-q4_k_m, cuda and cpu (main)"
greedy main "$M/0.8b-q4_k_m.gguf"
el "bench 1k, prime 512 (main)"
mkdir -p /tmp/b7
timeout 150 ./bin/main/bench -model "$M/9b-q4_k_m.gguf,$M/0.8b-q4_k_m.gguf,$M/0.8b-iq4_xs.gguf,$M/0.8b-q6_k.gguf" -ctx 1024 -reps 3 -tokens 64 -prompt 512 -sampled=false -out /tmp/b7 > /tmp/b7/stdout.txt 2> /tmp/b7/stderr.txt
grep -E 'prime|copy' /tmp/b7/stderr.txt | head; grep -E '\| graph \|' /tmp/b7/stdout.txt | cut -d'|' -f2,4,5,6,9
tar czf "$OUT/bench-final.tgz" -C /tmp b7
el done
