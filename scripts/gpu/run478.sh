#!/usr/bin/env bash
# Session 88 (`bash scripts/gpu/run478.sh`, asked for as nvidia-h200; it
# came as an H100, log docs/results/h100-run478-log.txt): the
# 0.8B half of docs/perf.md's table command on main (the five 0.8B types at
# its five contexts), compared with run467's rows of the same models
# (session 85's main on an H100), since run477's whole table no longer fit
# the session's device time. carry ["bin"]; binaries: `bash
# scripts/gpu/bins.sh m=b0fcddd:memra,bench`.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
synth m "0.8b" "bf16 q8_0 q4_k q5_k q6_k"
wait_synth
el "bench (the table's 0.8B rows)"
mkdir -p /tmp/table
ms=""; for t in bf16 q8_0 q4_k q5_k q6_k; do ms="$ms,$M/0.8b-$t.gguf"; done
timeout 200 ./bin/m/bench -model "${ms#,}" -ctx 64,1024,4096,16384,32768 -reps 3 -tokens 64 -out /tmp/table \
  > /tmp/table/stdout.txt 2> /tmp/table/stderr.txt
grep -E '\| (graph|sampled) \|' /tmp/table/stdout.txt | cut -d'|' -f2,4,5,6,9,13
tar czf "$OUT/table.tgz" -C /tmp table
el compare
./bin/m/bench -compare docs/results/h100-run467.json "$(ls -t /tmp/table/bench-*.json | head -1)" 2>&1 | tail -40
el done
