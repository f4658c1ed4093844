#!/usr/bin/env bash
# Session 34, docs/perf.md step 89: run232 again, with pring_hx_erp holding
# its unit's scales two f16 a word and zeroing the words past a gate|up
# unit (run232's form spilled 240 bytes; this one 84). carry ["bin"]. ~1 min.
exec bash scripts/gpu/run232.sh
