#!/usr/bin/env bash
# Session 34, docs/perf.md step 89: run232 again, with pring_hx_erp taking
# the next phase's first unit in the barrier's wait only if it has landed
# (run233's waited for it, holding the block's next staging back).
# carry ["bin"]. ~1 min.
exec bash scripts/gpu/run232.sh
