#!/usr/bin/env bash
# Session 79, step 133 (`bash scripts/gpu/run444.sh`): sampled steps and
# DecodeTop through the logits' 8-bit copy, two forms. new (af3ecec): every
# row's lower bound written, topk_select's two passes for the k-th largest,
# logits_screen_top. m (the working tree): each bound block keeps its m
# largest lower bounds and logits_screen_top finds the k-th of their union
# itself (two nodes fewer). m's screen kernel test (greedy and top k, with
# candidate counts) and end-to-end test (greedy, sampled and DecodeTop
# against FullLogits loads), the sampled, session and penalty tests and
# graph==eager; memra run's default sampling with and without
# MEMRA_FULL_LOGITS=1 (same seed: the same tokens); then graph and sampled
# decode of the 0.8B and 9B bf16 at 1k: m, new, and m with -full-logits,
# alternated twice. Prediction: m's sampled rows +7% (0.8B) and +5% (9B)
# over -full-logits, new's a few µs a token slower than m's, the greedy
# rows the same in all three but -full-logits. ~5 minutes. carry ["bin"];
# binaries: af3ecec's (bins.sh) as bin/new, the working tree's (go tool
# mage cuda:bins) as bin/m, in bin/bin.txz.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name --format=csv,noheader
synth m "0.8b 9b" "bf16"
el "screen tests (m)"
(cd engine/gpu && timeout 300 "$R/bin/m/engine_gpu.test" -test.run 'LogitsScreen|ScreenedEqualsFull|Sampled|SessionTop|Penalty|GraphEqualsEager' -test.v 2>&1 |
  grep -E '^(--- |ok|FAIL|PASS)|candidates|panic|_test.go' | grep -v '^    --- PASS')
wait_synth
el "memra run (default sampling, seed 7)"
for full in 0 1; do
  MEMRA_FULL_LOGITS=$full timeout 100 ./bin/m/memra run -m "$M/0.8b-bf16.gguf" --prompt-tokens 1,2,3 -n 48 -seed 7 -print-tokens > /tmp/run-$full.txt 2>/tmp/run-$full.err
  echo "full=$full rc $?: $(head -c 200 /tmp/run-$full.txt)"
done
cmp -s /tmp/run-0.txt /tmp/run-1.txt && echo "sampled tokens screened == full" || echo "sampled tokens DIFFER"
for r in 1 2; do for mode in m new full; do
  b=$mode flag=""; [ $mode = full ] && b=m flag=-full-logits
  d=/tmp/bs/$mode-$r; mkdir -p "$d"
  timeout 150 ./bin/$b/bench -model "$M/0.8b-bf16.gguf,$M/9b-bf16.gguf" -ctx 1024 -reps 3 -tokens 64 $flag -out "$d" \
    > "$d/stdout.txt" 2> "$d/stderr.txt"
  echo "$mode round $r: rc $?"
  grep -E '\| (graph|sampled) \|' "$d/stdout.txt" | cut -d'|' -f2,4,5,6,9,13
done; done
tar czf "$OUT/bench-sampled.tgz" -C /tmp bs
el done
