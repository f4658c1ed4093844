#!/usr/bin/env bash
# Session 68: one call for whichever card comes, asked as nvidia-h200 (an
# H100 may come for it): on an H200 run368.sh (docs/perf.md's table on
# main, the gates, the mixed launch and steps 117-119's priming against
# de47370), on any other card run372.sh (the prefill variants once, r8 and
# r8all against main, and ncu of main's batch kernels). carry ["bin"];
# binaries from
#   BINS_ARCHS=90 bash scripts/gpu/bins.sh main=main:memra,gate,bench,engine_gpu.test \
#     old=de47370:bench once=1374fbf:bench,engine_gpu.test \
#     r8=main+scripts/gpu/patches/mvb-r8.patch:bench,engine_gpu.test \
#     r8all=main+scripts/gpu/patches/mvb-r8.patch+scripts/gpu/patches/mvb-r8plain.patch:bench,engine_gpu.test
# ~8 min either way.
set -u
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  exec bash scripts/gpu/run368.sh
fi
exec bash scripts/gpu/run372.sh
