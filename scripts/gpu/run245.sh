#!/usr/bin/env bash
# Session 35: main at the session's end (step 90, after the review's
# fixes): run235's checks of every pring form (pring_hx_fr, _br, _brs and
# _brp too), their timings with 2 slots a warp, one FFN a launch (with
# pring_hx_brp on counters zeroed beforehand, plain and with PDL), the
# traces, no rows; the graph nodes; the 0.8B chains' checks; main's decode
# tests and gate. carry ["bin"]. ~1.5 min.
exec bash scripts/gpu/run235.sh
