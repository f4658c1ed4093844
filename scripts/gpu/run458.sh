#!/usr/bin/env bash
# Session 84 (`bash scripts/gpu/run458.sh`), asked for as nvidia-h100-x1
# after 17 calls that got no machine; it ran on an H100, so no table (log
# docs/results/h100-run458-log.txt, profile
# docs/results/h100-run458-profile.md with its JSON). Prepared in session
# 82; session 82's last calls and all 21 of session 83's got no machine.
# 1. `bench -profile` timing the greedy graph's own step
#    (gpu.Model.ProfileGraphStep) instead of an eager one, whose 16-bit
#    logits are read whole where the graph's go through step 132's screen
#    (run457's bf16 profile showed a 171.5 us LM head that no graph step
#    runs). p = main + patches/profgraph.patch: its profile tests
#    (TestGPUProfileGraphStep: the profiled step is DecodeStepDC's, its
#    launches the graph's nodes, its bytes an eager step's with
#    ScreenBytes' in place of the matrix), the eager profile's tests, then
#    bench -profile 8 on the 0.8B bf16 and q8_0 at 1k (~1 minute), and
#    -compare against run457's eager profile of main (the step profiles
#    named as unpaired, the rows' ratios the same machine kind's). The
#    graph tests also run: they are the first GPU run of dcb407c
#    (Cache.tokenPlace, the token ring's index for FillSynthetic and
#    awaitToken).
# 2. On an H200 only: docs/perf.md's table command (lib.sh full_table) on
#    main (m) compared with run410's JSON, which steps 127-138 have not had
#    (~5 minutes; run450.sh's, which no H200 has run).
# carry ["bin"]; binaries: `bash scripts/gpu/bins.sh
# p=main+scripts/gpu/patches/profgraph.patch:memra,bench,engine_gpu.test m=main:bench`.
set -u
source scripts/gpu/lib.sh
start_run
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)
echo "$gpu"
presets="0.8b" types="bf16 q8_0"
case $gpu in *H200*) presets="0.8b 9b" types="bf16 q8_0 q4_k q5_k q6_k" ;; esac
synth p "$presets" "$types"
el "tests (p)"
(cd engine/gpu && timeout 300 "$R/bin/p/engine_gpu.test" -test.run 'Profile|EarlyLoads|CountersOutOfStep|GraphEqualsEager|GraphStopRunsAhead|GraphSampled|GraphPenalty|FillSynthetic|ScreenedEqualsFull' -test.v 2>&1 |
  grep -E '^(--- |ok|FAIL|PASS)|panic|profile_gpu_test' | grep -v '^    --- PASS')
wait_synth
profile08 p
grep -A18 '^## Kernel time per graph step' /tmp/prof/stdout.txt
./bin/p/bench -compare docs/results/h100-run457-profile.json "$(ls -t /tmp/prof/bench-*.json | head -1)" 2>&1 | grep -E 'geomean|not compared'
case $gpu in
*H200*)
  full_table m
  el compare
  ./bin/m/bench -compare docs/results/h200-run410.json "$(ls -t /tmp/table/bench-*.json | head -1)" 2>&1 | tail -70
  ;;
esac
el done
