#!/usr/bin/env bash
# Session 34: main at the session's end, after pring_hx_df and pring_hx_l2/l4
# were added: run235's checks, timings, traces, gate and decode tests with
# the final binaries. carry ["bin"]. ~1 min.
exec bash scripts/gpu/run235.sh
