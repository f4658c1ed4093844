#!/usr/bin/env bash
# Session 84, on run458's H100 while it was warm (`bash
# scripts/gpu/run459.sh`; the device call ran these lines as one command):
# run458's -compare put the eager rows 1.153 of run457's. Is that
# profgraph.patch or the machine? Main (m) and main + profgraph (p) in
# turn, twice each, graph and eager rows of the 0.8B bf16 and q8_0 at 1k
# (log docs/results/h100-run459-log.txt). carry ["bin"]; binaries as
# run458's.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name --format=csv,noheader
synth m "0.8b" "bf16 q8_0"
wait_synth
for b in m p m p; do
  el "bench $b"
  timeout 60 ./bin/$b/bench -model "$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf" -ctx 1024 -reps 3 -tokens 64 -out /tmp/ab$b 2>/dev/null |
    grep -E '\| (graph|eager) \|' | cut -d'|' -f2,4,5,6,9
done
el done
