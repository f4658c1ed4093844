#!/usr/bin/env bash
# Session 79, step 133 (`bash scripts/gpu/run443.sh`): sampled steps and
# DecodeTop through the logits' 8-bit copy (every row's lower bound, their
# top k, the candidates' exact logits, the top k of those). The screen's
# kernel test (greedy and top k, with candidate counts) and the end-to-end
# one (greedy, sampled and DecodeTop against FullLogits loads), the sampled
# and session tests; memra run's default sampling with and without
# MEMRA_FULL_LOGITS=1 (same seed: the same tokens); then graph and sampled
# decode of the 0.8B and 9B bf16 at 1k with and without -full-logits,
# alternated twice. Prediction: sampled rows +7-8% (0.8B) and +4-5% (9B),
# the greedy rows unchanged. ~5 minutes. carry ["bin"]; binaries: the
# working tree's (go tool mage cuda:bins) as bin/new in bin/bin.txz.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name --format=csv,noheader
synth new "0.8b 9b" "bf16"
el "screen tests (new)"
(cd engine/gpu && timeout 300 "$R/bin/new/engine_gpu.test" -test.run 'LogitsScreen|ScreenedEqualsFull|Sampled|SessionTop|Penalty|GraphEqualsEager' -test.v 2>&1 |
  grep -E '^(--- |ok|FAIL|PASS)|candidates|panic|_test.go' | grep -v '^    --- PASS')
wait_synth
el "memra run (default sampling, seed 7)"
for full in 0 1; do
  MEMRA_FULL_LOGITS=$full timeout 100 ./bin/new/memra run -m "$M/0.8b-bf16.gguf" --prompt-tokens 1,2,3 -n 48 -seed 7 -print-tokens > /tmp/run-$full.txt 2>/tmp/run-$full.err
  echo "full=$full rc $?: $(head -c 200 /tmp/run-$full.txt)"
done
cmp -s /tmp/run-0.txt /tmp/run-1.txt && echo "sampled tokens screened == full" || echo "sampled tokens DIFFER"
for r in 1 2; do for mode in screen full; do
  flag=""; [ $mode = full ] && flag=-full-logits
  d=/tmp/bs/$mode-$r; mkdir -p "$d"
  timeout 150 ./bin/new/bench -model "$M/0.8b-bf16.gguf,$M/9b-bf16.gguf" -ctx 1024 -reps 3 -tokens 64 $flag -out "$d" \
    > "$d/stdout.txt" 2> "$d/stderr.txt"
  echo "$mode round $r: rc $?"
  grep -E '\| (graph|sampled) \|' "$d/stdout.txt" | cut -d'|' -f2,4,5,6,9,13
done; done
tar czf "$OUT/bench-sampled.tgz" -C /tmp bs
el done
