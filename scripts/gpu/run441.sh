#!/usr/bin/env bash
# Session 78, prepared and never run as such: run442.sh (session 79) ran
# its work and is the record (the session's device time ran out), for
# any GPU (`bash scripts/gpu/run441.sh`). Step 132's copy of the logits
# matrix is built on the host before the layers upload, which added about
# 0.3 s to the 0.8B bf16's load and 1 s to the 9B's (run438). ovl = main +
# patches/screen-overlap.patch: the copy built on a goroutine beside the
# whole upload (the CPUs idle while bf16 rows cross to the GPU), placed
# last. ovl's screen tests (the end-to-end one too), then the load time of
# the 0.8B and 9B bf16 with main and ovl in turn, three times. Prediction:
# ovl's loads within ~0.1 s of -full-logits' (run438: 0.29-0.34 and
# 2.65-2.67 s). ~3 minutes. carry ["bin"]; binaries from
#   bash scripts/gpu/bins.sh main=main:bench,engine_gpu.test \
#     ovl=main+scripts/gpu/patches/screen-overlap.patch:bench,engine_gpu.test
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name --format=csv,noheader
mkdir -p $M
run_tests ovl 'ScreenedGreedyEqualsFull|LogitsScreen|GraphEqualsEager'
for r in 1 2 3; do for b in main ovl; do
  el "load ($b, round $r)"
  timeout 120 "./bin/$b/bench" -preset 0.8b,9b -type bf16 -models-dir $M -ctx 64 -reps 1 -tokens 16 -sampled=false -out /tmp/ld-$b-$r \
    2>&1 >/dev/null | grep -E 'loaded|error'
done; done
el done
