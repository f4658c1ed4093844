#!/usr/bin/env bash
# Session 80 (`bash scripts/gpu/run448.sh`): session 79's two prepared
# runs in one call. On any GPU: the screen kernel test after the review's
# mends (run447.sh's). On an H200 only, then: docs/perf.md's current table
# (lib.sh full_table) with main's bench, compared with run410's JSON, which
# steps 127-134 have not had (run446.sh's). carry ["bin"]; binaries:
# `bash scripts/gpu/bins.sh p=main` at b9dd470.
set -u
source scripts/gpu/lib.sh
start_run
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader)
echo "$gpu"
case $gpu in *H200*) synth p "0.8b 9b" "bf16 q8_0 q4_k q5_k q6_k" ;; esac
el "screen tests (p)"
(cd engine/gpu && timeout 200 "$R/bin/p/engine_gpu.test" -test.run 'LogitsScreen' -test.v 2>&1 |
  grep -E '^(--- |ok|FAIL|PASS)|candidates|panic|_test.go' | grep -v '^    --- PASS')
case $gpu in *H200*) ;; *) echo "not an H200: no table"; el done; exit 0 ;; esac
wait_synth
full_table p
el compare
./bin/p/bench -compare docs/results/h200-run410.json "$(ls -t /tmp/table/bench-*.json | head -1)" 2>&1 | tail -70
el done
