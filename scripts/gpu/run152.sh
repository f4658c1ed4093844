#!/usr/bin/env bash
# Session 23 (docs/perf.md step 69): what a node's hand-off costs in a graph,
# griddepcontrol.wait against a counter the predecessor's blocks release and
# the consumer polls (engine/internal/flagchain). bin/flagchain and
# bin/flagchain.cubin (nvcc -O3 -arch=sm_90 -cubin, built here); carry ["bin"].
# ~1 minute. engine/internal/flagchain as of 7779835 (-opts was dropped after
# it, for run153's -wper and trigger positions); its first form, before -opts,
# ran once too: that output is in the log.
set -u
exec > >(tee -a "$OUT/log.txt") 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
./bin/flagchain -cubin bin/flagchain.cubin -grids 1,132,264,528 -words 1024,4096 -sleep 0,128 -opts 0,1,2,3
echo "rc=$?"
