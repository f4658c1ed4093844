#!/usr/bin/env bash
# Session 85 (`bash scripts/gpu/run460.sh`; prepared in session 84, whose
# device time went on 17 calls that got no machine before run458 and run459
# ran on an H100): ran on an H100, so it took that branch, the 9B q8_0 and
# bf16 graph-step profiles at 1k (log docs/results/h100-run460-log.txt,
# tables h100-run460-profile.{md,json}). carry ["bin"]; binaries: `bash
# scripts/gpu/bins.sh m=main:memra,bench` at 1e89bb7.
# On an H200: docs/perf.md's table command (lib.sh full_table) on main,
# compared with run410's JSON, which steps 127-139 have not had (run450's,
# ~5 minutes), then the 0.8B's graph-step profile (run458's, on the H200);
# run461 asks for that half alone.
# On any other GPU: the 9B q8_0 and bf16 graph-step profiles at 1k, which
# no run had taken since `bench -profile` times the graph's step (the 85%
# goal's step kernel by kernel as the graph replays it; ~2 minutes).
set -u
source scripts/gpu/lib.sh
start_run
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)
echo "$gpu"
case $gpu in
*H200*)
  synth m "0.8b 9b" "bf16 q8_0 q4_k q5_k q6_k"
  wait_synth
  full_table m
  el compare
  ./bin/m/bench -compare docs/results/h200-run410.json "$(ls -t /tmp/table/bench-*.json | head -1)" 2>&1 | tail -70
  profile08 m
  ;;
*)
  synth m "9b" "bf16 q8_0"
  wait_synth
  profile_at m "9b-q8_0 9b-bf16"
  grep -A18 '^## Kernel time per graph step' /tmp/prof/stdout.txt
  ;;
esac
el done
