#!/usr/bin/env bash
# Session 45: a transformers fixture whose Gated DeltaNet has 3 V heads per
# K head (qwen35-tiny-hv6: 2 K, 6 V), where the grouped and interleaved head
# orders differ in every pairing; and qwen35-tiny again, to compare with the
# committed JSON (the oracle's reproducibility on this machine's torch and
# transformers). Needs no binaries. ~1 min.
set -u
cd /tmp && timeout 400 python3 "$OLDPWD/scripts/oracle/make_fixtures.py" --out "$OUT" --only qwen35-tiny-hv6,qwen35-tiny > "$OUT/oracle.log" 2>&1
echo "oracle rc=$?"
grep -E '^(python|===|weight_scale|cached vs|wrote)' "$OUT/oracle.log"
