#!/usr/bin/env bash
# Session 28, perf.md step 82 after review: barload with the active threads
# striding over the whole buffer (run184's shallow HBM rows read only part
# of it, from the L2), the stop flag on its own line, and checks that no
# streamer started late and every SM id was in range. bin/main.
# carry ["bin"]. ~1 minute.
set -u
source scripts/gpu/lib.sh
start_run
el "barload, 2000 barriers"
timeout 120 ./bin/main/barload -cubin bin/main/barload.cubin -active 1024,512,256,128,64,32,16
el done
