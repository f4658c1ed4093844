#!/usr/bin/env bash
# Session 35, docs/perf.md step 90: run245 again with pring_hx_brp's PDL
# check (4 launches of one FFN with PDL bit for bit against 4 without),
# the same end-of-session checks, timings, traces, decode tests and gate.
# carry ["bin"]. ~1.5 min.
exec bash scripts/gpu/run235.sh
