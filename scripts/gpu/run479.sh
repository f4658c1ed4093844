#!/usr/bin/env bash
# Session 89 (`bash scripts/gpu/run479.sh`, asked for as nvidia-h200; it
# came as an H100, so the H200 branch below did not run; log, with the call
# typed inline after it (carveout 28, 14 and 0), in
# docs/results/h100-run479-log.txt): docs/perf.md step
# 145, one shared-memory carveout for every kernel of a step. The driver
# sizes each launch's L1/shared split from that kernel's own needs; the
# question is whether, an SM having one split at a time, a node whose split
# differs from its predecessor's cannot start beside that predecessor's
# last blocks, which PDL's early launch needs (not taken: every setting
# was slower than the driver's choice). carveout.patch sets every
# kernel's preferred carveout to MEMRA_CARVEOUT percent (unset: the
# driver's default, main's behaviour). ncu's launch statistics show the
# split each decode kernel gets; then bench's graph rows with and without
# the setting, alternating on one machine. On an H200 run477's table comes
# first (main's H200 table, not run since run410). carry ["bin"];
# binaries: `bash scripts/gpu/bins.sh c=d0fb275+scripts/gpu/patches/launch/carveout.patch:memra,bench`.
set -u
source scripts/gpu/lib.sh
start_run
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)
echo "$gpu"
case $gpu in
*H200*)
  synth c "0.8b 9b" "bf16 q8_0 q4_k q5_k q6_k"
  wait_synth
  full_table c
  el compare
  ./bin/c/bench -compare docs/results/h200-run410.json "$(ls -t /tmp/table/bench-*.json | head -1)" 2>&1 | tail -70
  el done
  exit 0
  ;;
esac
synth c "0.8b" "bf16 q8_0"; s1=$SYNTH
synth c "9b" "q8_0"; SYNTH="$s1 $SYNTH"
wait_synth
ls -la $M/*.gguf
# ncu_cfg V: the launch statistics of one of each decode kernel of the 0.8B
# bf16's graph steps with MEMRA_CARVEOUT=V.
ncu_cfg() {
  el "ncu launch stats, carveout=${1:-default}"
  MEMRA_CARVEOUT=$1 timeout 150 ncu --section LaunchStats -k 'regex:^(matvec_bf16|matvec_bf16_wide|gdn_conv|gdn_delta_normed|attn_prep_f16|attn_prep_split_f16.*|attn_split_vec_f16_d256|attn_combine|logits_screen.*|argmax.*|embed_bf16)$' \
    -c 14 ./bin/c/memra run -m "$M/0.8b-bf16.gguf" --prompt-tokens 1,2,3 -n 3 --greedy --device cuda > "/tmp/ncu-${1:-d}.txt" 2>&1
  grep -E '^  [a-z_0-9]+|Shared Memory Configuration Size|Dynamic Shared Memory Per Block|Static Shared Memory Per Block|Registers Per Thread|Waves Per SM|==ERR|rror' "/tmp/ncu-${1:-d}.txt" | head -90
  cp "/tmp/ncu-${1:-d}.txt" "$OUT/"
}
ncu_cfg ""
ncu_cfg 100
# ab MODELS CTXS V...: bench's graph rows with MEMRA_CARVEOUT=V for each V in
# turn (an empty V: unset, the driver's choice).
ab() {
  local ms=$1 ctx=$2 v d; shift 2
  mkdir -p /tmp/bn
  for v in "$@"; do
    el "bench $ctx carveout=${v:-default}"
    d=/tmp/bn/cv${v:-d}-$(date +%s%N); mkdir -p "$d"
    MEMRA_CARVEOUT=$v timeout 150 ./bin/c/bench -model "$ms" -ctx "$ctx" -reps 3 -tokens 64 -out "$d" 2>"$d/stderr.txt" | grep -E '\| graph \|' | cut -d'|' -f2,4,5,6,9,13
  done
  tar czf "$OUT/bench-rotation.tgz" -C /tmp bn
}
ab "$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf" 1024 "" 100 50 "" 100 50
ab "$M/9b-q8_0.gguf" 1024 "" 100 "" 100
el done
