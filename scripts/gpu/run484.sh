#!/usr/bin/env bash
# Ran in session 92 (logs docs/results/h100-run484-log.txt, the table
# h100-run484.json; perf.md step 149) after session 91's calls got none,
# its m built from 938a714 (08f55d1's code; only a comment differs).
# Session 91 (`bash scripts/gpu/run484.sh`): docs/perf.md's table command on
# main after step 148 (the f16/bf16 matvecs and the K-quants' ring release
# their successor just after their wait), run477's form. On an H200 it is
# run461's: the table compared with run410's, then the graph-step profiles
# of the 0.8B and the 9B q8_0. On any other GPU the same table compared with
# run467's (session 85's main on an H100): the rows run483 did not measure
# (Q5_K, Q6_K, the 9B K-quants and bf16, contexts past 1k) are step 148's
# check there, and first, on any GPU, main before the step (o = d7a5248)
# and after it (m) in turn twice on the K-quant and 9B bf16 files at 1k,
# with their greedy tokens compared. Two calls, the second typed at once on
# the warm machine (each under the 600 s a call allows): `run484.sh rot`,
# then `run484.sh table`. carry ["bin"]; binaries: `bash
# scripts/gpu/bins.sh o=d7a5248:memra,bench m=08f55d1:memra,bench`.
set -u
source scripts/gpu/lib.sh
start_run
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)
echo "$gpu"
synth m "0.8b 9b" "bf16 q8_0 q4_k q5_k q6_k"
wait_synth
if [ "${1:-}" = rot ]; then
bench_rotation "$M/0.8b-q5_k.gguf,$M/0.8b-q6_k.gguf,$M/9b-q4_k.gguf,$M/9b-q5_k.gguf,$M/9b-q6_k.gguf,$M/9b-bf16.gguf" 1024 o m o m
el tokens
tokens_cmp o m "0.8b-q5_k 0.8b-q6_k 9b-q4_k 9b-q5_k 9b-q6_k 9b-bf16"
el done
exit 0
fi
full_table m
el compare
case $gpu in
*H200*)
  ./bin/m/bench -compare docs/results/h200-run410.json "$(ls -t /tmp/table/bench-*.json | head -1)" 2>&1 | tail -70
  profile_at m "0.8b-bf16 0.8b-q8_0 9b-q8_0"
  grep -A22 '^## Kernel time per graph step' /tmp/prof/stdout.txt
  ;;
*)
  ./bin/m/bench -compare docs/results/h100-run467.json "$(ls -t /tmp/table/bench-*.json | head -1)" 2>&1 | tail -70
  ;;
esac
el done
