#!/usr/bin/env bash
# Session 34, docs/perf.md step 89: run236 again, with pring_hx_df's flags a
# 128-byte line each (PRG_DF_STRIDE): run236's, packed into 5 lines, ran the
# chain with no rows at 3.66 µs a phase against the barrier's 2.65.
# carry ["bin"]. ~1 min.
exec bash scripts/gpu/run236.sh
