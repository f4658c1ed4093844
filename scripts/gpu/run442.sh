#!/usr/bin/env bash
# Session 79 (`bash scripts/gpu/run442.sh`), any GPU: run440's and run441's
# work in one call. Main's (step 132 after its review mend) screen tests
# not yet run on a GPU: TestGPUScreenedGreedyEqualsFull and the screen
# kernel's overflowing winner. Then ovl = main +
# patches/screen-overlap.patch (the logits copy built on a goroutine beside
# the upload): its screen tests and graph==eager, and the 0.8B and 9B bf16
# load times of main and ovl in turn, three rounds. Prediction: ovl's loads
# within ~0.1 s of -full-logits' (run438: 0.29-0.34 and 2.65-2.67 s), main's
# ~0.3 s and ~1 s over them. ~4 minutes. carry ["bin"]; binaries from
#   bash scripts/gpu/bins.sh main=main:memra,bench,gate,engine_gpu.test \
#     ovl=main+scripts/gpu/patches/screen-overlap.patch:bench,engine_gpu.test
# (at 7616c17, before the patch moved to patches/screen/overlap.patch when it landed)
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name --format=csv,noheader
mkdir -p $M
run_tests main 'ScreenedGreedyEqualsFull|LogitsScreen'
run_tests ovl 'ScreenedGreedyEqualsFull|LogitsScreen|GraphEqualsEager'
for r in 1 2 3; do for b in main ovl; do
  el "load ($b, round $r)"
  timeout 120 "./bin/$b/bench" -preset 0.8b,9b -type bf16 -models-dir $M -ctx 64 -reps 1 -tokens 16 -sampled=false -out /tmp/ld-$b-$r \
    2>&1 >/dev/null | grep -E 'loaded|error'
done; done
el "load (main -full-logits)"
timeout 120 ./bin/main/bench -preset 0.8b,9b -type bf16 -models-dir $M -ctx 64 -reps 1 -tokens 16 -sampled=false -full-logits -out /tmp/ld-full \
  2>&1 >/dev/null | grep -E 'loaded|error'
el done
