#!/usr/bin/env bash
# Session 82 (`bash scripts/gpu/run457.sh`), asked for as nvidia-h200; it
# ran on an H100, so the profile (log docs/results/h100-run457-log.txt,
# report docs/results/h100-run457-profile.md with its JSON).
# On an H200: run450's table (docs/perf.md's table command, lib.sh
# full_table, on main after step 138) compared with run410's JSON, which
# steps 127-138 have not had (~5 minutes). On any other GPU (the H100s
# that most calls get): where a 0.8B step's time goes now, `bench
# -profile 8` on the 0.8B bf16 and q8_0 at 1k (~1 minute). carry ["bin"];
# binaries: `bash scripts/gpu/bins.sh p=main:memra,bench`.
set -u
source scripts/gpu/lib.sh
start_run
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)
echo "$gpu"
case $gpu in
*H200*)
  synth p "0.8b 9b" "bf16 q8_0 q4_k q5_k q6_k"
  wait_synth
  full_table p
  el compare
  ./bin/p/bench -compare docs/results/h200-run410.json "$(ls -t /tmp/table/bench-*.json | head -1)" 2>&1 | tail -70
  ;;
*)
  synth p "0.8b" "bf16 q8_0"
  wait_synth
  profile08 p
  ;;
esac
el done
