#!/usr/bin/env bash
# Session 78, step 132 as it lands (`bash scripts/gpu/run438.sh`): the
# fatbin rebuilt for every architecture, the verify kernels' wait in their
# own bodies, the host's copy built about twice as fast. The screen's
# kernel test with its candidate counts, a gate on the 0.8B and 9B bf16,
# and the load time with the copy and without (-full-logits), twice.
# ~3 minutes. carry ["bin"]; binaries: the working tree's (go tool mage
# cuda:bins) as bin/new in bin/bin.txz.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name --format=csv,noheader
synth new "0.8b 9b" "bf16"
el "screen kernel test (new)"
(cd engine/gpu && timeout 200 "$R/bin/new/engine_gpu.test" -test.run 'LogitsScreen|GraphEqualsEager' -test.v 2>&1 | grep -E '^(--- |ok|FAIL|PASS)|candidates|panic' | grep -v '^    --- PASS')
wait_synth
gate new "$M/0.8b-bf16.gguf" 300 64 0
gate new "$M/9b-bf16.gguf" 300 64 0
for r in 1 2; do for mode in screen full; do
  flag=""; [ $mode = full ] && flag=-full-logits
  d=/tmp/bl/$mode-$r; mkdir -p "$d"
  timeout 120 ./bin/new/bench -model "$M/0.8b-bf16.gguf,$M/9b-bf16.gguf" -ctx 1024 -reps 3 -tokens 64 -sampled=false $flag -out "$d" \
    > "$d/stdout.txt" 2> "$d/stderr.txt"
  echo "$mode round $r: rc $?"
  grep -E 'loaded' "$d/stderr.txt"
  grep -E '\| graph \|' "$d/stdout.txt" | cut -d'|' -f2,4,5,6,9,13
done; done
tar czf "$OUT/bench-load.tgz" -C /tmp bl
el done
