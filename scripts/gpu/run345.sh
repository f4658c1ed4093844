#!/usr/bin/env bash
# Ran in session 61 on an H100 (no H200 was lent): docs/results/h100-run345-log.txt,
# perf.md step 112. The patches it names are on main since, main's build being kql's.
# Session 61 (prepared without a GPU): llama-quantize's K mixes (memra synth
# --type q4_k_m|q5_k_m, on main since session 61) on a GPU for the first
# time, and mixfuse.patch (perf.md step 111): the matrices that read one
# input fused in runs of one type instead of all or none. Run after
# run343.sh and run344.sh on the same machine, with their bin.txz built by
#   bash scripts/gpu/bins.sh main=main:memra,bench \
#     kql=main+scripts/gpu/patches/kq-loops.patch+scripts/gpu/patches/kq-nobreak.patch+scripts/gpu/patches/mixfuse.patch \
#     fus=main+scripts/gpu/patches/mixfuse.patch:memra,bench
# (run343.sh runs every GPU test on kql: the K-mix model's partial runs,
# TestGPUDecodeMatchesCPU/qwen35-k-mix, included). main, fus and kql
# alternated: decode at 1k and priming at P = 512.
# Predictions (perf.md steps 110, 111): 9B Q4_K_M at 1k ~410-440 tok/s on
# main (9B Q4_K's 502 with ~12% more bytes, its Q6_K down projections,
# attn_qkv and LM head on the slower Q6_K kernel, and 44 more nodes: 272 a
# token, the four input projections of a DeltaNet layer whose attn_qkv is
# Q6_K each its own launch); fus 244 nodes (qkv and gate|beta|alpha; q|k and
# v), ~2-3% faster; 0.8B Q4_K_M 206 nodes on main, 184 on fus, ~6-9%
# faster. kql adds steps 107-109 (its Q6_K loops) on top of fus. Gates
# PASS, greedy tokens cuda == cpu on 0.8B Q4_K_M, 64 greedy tokens main ==
# fus on the mixes, or differing at near-ties: a run's rows may take
# another kernel than its parts alone (gate|beta|alpha's rows the plain one
# where each alone took the wide one), which moves the logits' last bits.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b 9b" "q4_k_m"
s1=$SYNTH
synth main "9b" "q5_k_m"
SYNTH="$SYNTH $s1"
wait_synth
for m in 0.8b-q4_k_m 9b-q4_k_m 9b-q5_k_m; do echo "$m: $(grep -c . "$M/$m.log") log lines, $(stat -c %s "$M/$m.gguf") bytes"; done
el "gates (kql)"
gate kql "$M/0.8b-q4_k_m.gguf" 300 256 0
gate kql "$M/9b-q4_k_m.gguf" 300 64 1
el "greedy tokens, 0.8b-q4_k_m, cuda and cpu (kql)"
greedy kql "$M/0.8b-q4_k_m.gguf"
el "64 greedy tokens, main against fus"
tokens_cmp main fus "0.8b-q4_k_m 9b-q4_k_m"
mkdir -p /tmp/bm
for b in main fus main fus kql; do
  el "bench 1k, prime 512 ($b)"
  d=/tmp/bm/$b-$(date +%s%N); mkdir -p $d
  timeout 110 "./bin/$b/bench" -model "$M/9b-q4_k_m.gguf,$M/9b-q5_k_m.gguf,$M/0.8b-q4_k_m.gguf" -ctx 1024 -reps 3 -tokens 64 -prompt 512 -sampled=false -out $d > $d/stdout.txt 2> $d/stderr.txt
  grep -E 'prime' $d/stderr.txt; grep -E '\| graph \|' $d/stdout.txt | cut -d'|' -f2,4,5,6,9,13
  grep -E '^\| [0-9.]+b-q' $d/stdout.txt | grep -E '\| f16 \|' | cut -d'|' -f2,6,12,14
done
tar czf "$OUT/bench-mix.tgz" -C /tmp bm
el done
