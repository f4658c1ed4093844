#!/usr/bin/env bash
# Session 35: main at the session's end, after pring_hx_brp's launch was
# written once (launchBrp): run235's checks, timings, one FFN a launch,
# traces, the 0.8B chains' checks, main's decode tests and gate.
# carry ["bin"]. ~1.5 min.
exec bash scripts/gpu/run235.sh
