#!/usr/bin/env bash
# Session 23 (docs/perf.md step 69): run152's chain with a weight stream per
# node, loaded before the wait (0, 4 and 8 loads of 16 bytes a thread: 2.16 to
# 17.3 MB a node on 132-528 blocks), each hand-off (griddepcontrol.wait, a
# released counter) with the successor launched at a node's start, after its
# wait or at its end. engine/internal/flagchain as of 61e78cc (its flags have
# not changed since); bin/flagchain and bin/flagchain.cubin (nvcc -O3
# -arch=sm_90 -cubin, built here); carry ["bin"]. ~1 minute. It ran once, and
# printed the weights at twice their time at copy bandwidth (2 × bytes / copy,
# fixed in 5dc4eee); run154 repeats it fixed, with 2 loads a thread added.
set -u
exec > >(tee -a "$OUT/log.txt") 2>&1
./bin/flagchain -cubin bin/flagchain.cubin -grids 132,264,528 -words 1024 -wper 0,4,8 -sleep 0,128
echo "rc=$?"
