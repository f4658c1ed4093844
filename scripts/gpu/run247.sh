#!/usr/bin/env bash
# Session 35: main at the session's end, after the second review's fixes
# (the traced kernels loaded by one loop, pring_hx_brp's counters refused
# past pdlBars): run235's checks, timings, one FFN a launch, traces, the
# 0.8B chains' checks, main's decode tests and gate. carry ["bin"]. ~1.5 min.
exec bash scripts/gpu/run235.sh
