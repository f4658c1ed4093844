#!/usr/bin/env bash
# For branch next/kv-row (not yet run): the KV row store shared by kv_store_*
# and attn_prep_* (one device function per cache type) and attn_prep's
# common prefix as one function. The arithmetic is the same expressions in
# the same order, but the SASS of attn_prep_* and kv_store_f16 changed (the
# scheduling), so the kernel tests that demand exact bytes and the gates
# must pass before it merges.
set -u
exec > >(tee -a $OUT/log.txt) 2>&1
R=$PWD
(cd engine/gpu && timeout 200 $R/bin/engine_gpu.test -test.run 'GPU' -test.v -test.timeout 190s 2>&1 | grep -E "^(--- |ok|FAIL|PASS)|FAIL|panic" | grep -v "^    --- PASS")
for f in engine/testdata/fixtures/*.gguf; do for p in 64 300; do for k in 0 1; do
  echo "gate $(basename $f) P=$p fp8=$k: $(MEMRA_KV_FP8=$k timeout 120 ./bin/gate $f $p 256 2>/dev/null | grep -E 'gate (PASS|FAIL)|MISMATCH' | head -2 | tr '\n' ' ')"
done; done; done
