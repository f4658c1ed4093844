#!/usr/bin/env bash
# Session 28, perf.md step 82: barload again with the streamers' depth set
# by how many threads of a streamer block read (1,024, 256, 64, 16; each
# keeps four 16-byte loads in flight): the barrier's cost against the
# stream's rate (run183 had all 1,024: 1.05 -> 9 µs). bin/main.
# carry ["bin"]. ~1 minute.
set -u
source scripts/gpu/lib.sh
start_run
el "barload, 2000 barriers"
timeout 120 ./bin/main/barload -cubin bin/main/barload.cubin -active 1024,512,256,128,64,32,16
el done
