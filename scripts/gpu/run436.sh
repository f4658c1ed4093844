#!/usr/bin/env bash
# Session 78, step 132 on any GPU (`bash scripts/gpu/run436.sh`): greedy
# steps screen a 16-bit logits matrix through its 8-bit copy
# (kernels/logits_screen.cu, engine/gpu/screen.go). The screen's kernel
# test and the tests that compare greedy graph tokens with the host's pick
# from full logits, three gates (graph = screened, eager = full logits),
# then graph decode at 64 and 1k of the 0.8B and 9B bf16 with the screen
# and with -full-logits (the same binary, the old path), alternated twice,
# and bench -compare of each pair. ~6 minutes.
# carry ["bin"]; binaries: the working tree's (go tool mage cuda:bins,
# fatbin for sm_90 only) as bin/new in bin/bin.txz.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name --format=csv,noheader
synth new "0.8b 9b" "bf16"
run_tests new 'LogitsScreen|SessionEqualsEager|GraphEqualsEager|DecodeStepDCEqualsEager|GraphSampledEqualsSession|GraphPenaltyEqualsSession|SessionTop'
wait_synth
gate new "$M/0.8b-bf16.gguf" 300 64 0
gate new "$M/0.8b-bf16.gguf" 300 64 1
gate new "$M/9b-bf16.gguf" 300 64 0
mkdir -p /tmp/bs
for r in 1 2; do for mode in screen full; do
  el "bench $mode (round $r)"
  d=/tmp/bs/$mode-$r; mkdir -p "$d"
  flag=""; [ $mode = full ] && flag=-full-logits
  timeout 120 ./bin/new/bench -model "$M/0.8b-bf16.gguf,$M/9b-bf16.gguf" -ctx 64,1024 -reps 3 -tokens 64 -sampled=false $flag -out "$d" \
    > "$d/stdout.txt" 2> "$d/stderr.txt"
  echo "rc $?"
  grep -E 'screen|copy bandwidth' "$d/stderr.txt" | head -3
  grep -E '\| graph \|' "$d/stdout.txt" | cut -d'|' -f2,4,5,6,9,13
done; done
for r in 1 2; do
  el "compare full -> screen (round $r)"
  ./bin/new/bench -compare /tmp/bs/full-$r/bench-*.json /tmp/bs/screen-$r/bench-*.json 2>&1 | grep -E '\| graph \||geomean' | cut -d'|' -f2,4,5,6,7,8
done
tar czf "$OUT/bench-screen.tgz" -C /tmp bs
el done
